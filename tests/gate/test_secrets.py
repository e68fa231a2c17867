"""``bench check`` refuses records that hold secrets, naming the file and the field, never repeating the value.

Reproduces issue 10: three records holding an ``hf_`` token, an ``sk-`` key, an AWS key pair, URL user-info and a
PEM private key passed the gate (``ok: 3 record(s) added; 0 problem(s)``) and the report repeated the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import GitRepo, new_record

from bench.cli import main
from bench.gate import escape_gfm

EXP = "records/eagle-fast-verify"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\n"
    "-----END RSA PRIVATE KEY-----"
)
# Every planted value, and pieces of it long enough to identify it: none may appear in any output.
PLANTED = [
    "hf_AbCdEfGhIjKlMnOpQrStUv12",
    "sk-proj-abcdefghijklmnop0123",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "wJalrXUtnFEMI",
    "ada:hunter2pw",
    "hunter2pw",
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
    "MIIEowIBAAKC",
]


def planted_records() -> list[tuple[dict[str, Any], list[str]]]:
    """Three records, each with the fields that must be named."""
    one = new_record("20261201T101500Z-eagle3-abc1234", tok_s=81.0)
    one["title"] = "EAGLE-3 rerun, weights pulled with hf_AbCdEfGhIjKlMnOpQrStUv12"
    one["provenance"]["source"] = "https://ada:hunter2pw@tracker.example/runs/1"
    two = new_record("20261201T101600Z-eagle3-abc1235", tok_s=82.0)
    two["environment"]["env_vars"] = {
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    }
    two["description"] = "served behind a proxy with key sk-proj-abcdefghijklmnop0123"
    three = new_record("20261201T101700Z-eagle3-abc1236", tok_s=84.0)
    three["server"]["notes"] = ["launched by hand", PEM]
    return [
        (one, ["title", "provenance.source"]),
        (
            two,
            [
                "environment.env_vars.AWS_ACCESS_KEY_ID",
                "environment.env_vars.AWS_SECRET_ACCESS_KEY",
                "description",
            ],
        ),
        (three, ["server.notes[1]"]),
    ]


def run_cli(repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, str, str]:
    md, js = tmp_path / "report.md", tmp_path / "report.json"
    base = ["check", "--repo", str(repo.root), "--base", "main"]
    capsys.readouterr()
    rc = main([*base, "--report", str(md)])
    rc_json = main([*base, "--format", "json", "--report", str(js)])
    assert rc == rc_json
    out = capsys.readouterr()
    return rc, out.out, out.err, md.read_text(encoding="utf-8"), js.read_text(encoding="utf-8")


def assert_nowhere(texts: dict[str, str], planted: list[str]) -> None:
    for where, text in texts.items():
        for value in planted:
            assert value not in text, f"{value!r} repeated in {where}"


def test_records_holding_secrets_are_refused_without_repeating_them(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = planted_records()
    for data, _ in cases:
        repo.write_json(f"{EXP}/{data['id']}.json", data)
    repo.commit_all("three records with secrets")
    rc, out, err, md, js = run_cli(repo, tmp_path, capsys)
    assert rc == 1, err
    assert err.splitlines()[-1] == "gate failed: 3 record(s) added; 3 problem(s)"
    for data, fields in cases:
        rel = f"{EXP}/{data['id']}.json"
        line = next(x for x in err.splitlines() if x.startswith(f"FAIL {rel}: "))
        assert "secret" in line
        for f in fields:
            assert f in line, (f, line)
            assert escape_gfm(f) in md
        report = json.loads(js)
        assert any(x["path"] == rel and "secret" in x["reason"] for x in report["failures"])
    assert json.loads(js)["ok"] is False
    assert_nowhere({"stdout": out, "stderr": err, "report.md": md, "report.json": js}, PLANTED)


def test_secret_as_a_key_and_in_an_invalid_field(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A secret used as a JSON key is not repeated in the field path; one in a field that fails validation is not
    repeated by the validation message (which quotes the bad value)."""
    keyed = new_record("20261201T101500Z-eagle3-abc1234")
    keyed["server"]["args"] = {"sk-proj-abcdefghijklmnop0123": True}
    invalid = new_record("20261201T101600Z-eagle3-abc1235", tok_s=90.0)
    invalid["status"]["state"] = "hf_AbCdEfGhIjKlMnOpQrStUv12"
    for data in (keyed, invalid):
        repo.write_json(f"{EXP}/{data['id']}.json", data)
    repo.commit_all("secrets in odd places")
    rc, out, err, md, js = run_cli(repo, tmp_path, capsys)
    assert rc == 1
    assert f"FAIL {EXP}/{keyed['id']}.json: " in err and "server.args." in err
    assert f"FAIL {EXP}/{invalid['id']}.json: " in err and "status.state" in err
    assert_nowhere({"stdout": out, "stderr": err, "report.md": md, "report.json": js}, PLANTED)


def test_harness_redacted_values_and_record_ids_pass(repo: GitRepo, add_record: Callable[..., str]) -> None:
    """What the harness writes after redaction (``<redacted>``) is not a finding, and neither is a record id whose
    time, variant and hash look random together."""
    from bench.gate import run_check

    data = new_record("20261201T001107Z-eagle3-c5c2c04")
    data["environment"]["env_vars"] = {"HF_TOKEN": "<redacted>"}
    data["provenance"]["source"] = "https://<redacted>@tracker.example/runs/1"
    add_record(data)
    result = run_check(repo.root, "main")
    assert result.ok, result.failures


def test_a_secret_in_a_record_already_on_the_base_is_not_repeated(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10's example: the report's info differences printed
    ``environment.env_vars.AWS_SECRET_ACCESS_KEY: not stated vs wJalr…`` from the record compared against."""
    legacy = new_record("20261201T090000Z-eagle3-abc1230", tok_s=80.0)
    legacy["environment"]["env_vars"] = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
    legacy["provenance"]["source"] = "https://ada:hunter2pw@tracker.example/runs/0"
    repo.write_json(f"{EXP}/{legacy['id']}.json", legacy)
    base = repo.commit_all("a legacy record, merged before the gate scanned for secrets")
    clean = new_record("20261201T101500Z-eagle3-abc1234", tok_s=81.0)
    repo.write_json(f"{EXP}/{clean['id']}.json", clean)
    repo.commit_all("a clean record")
    md, js = tmp_path / "report.md", tmp_path / "report.json"
    capsys.readouterr()
    assert main(["check", "--repo", str(repo.root), "--base", base, "--report", str(md)]) == 0
    assert main(["check", "--repo", str(repo.root), "--base", base, "--format", "json", "--report", str(js)]) == 0
    out = capsys.readouterr()
    texts = {"stdout": out.out, "stderr": out.err, "report.md": md.read_text(), "report.json": js.read_text()}
    assert_nowhere(texts, PLANTED)
    assert "AWS\\_SECRET\\_ACCESS\\_KEY: &lt;redacted&gt; → —" in texts["report.md"]  # the field, not the value
