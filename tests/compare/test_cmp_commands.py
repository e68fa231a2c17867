from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from cmp_fixtures import LAB_BASELINE, LAB_EAGLE3, ROOT, level, record

from bench.compare import commands
from bench.record.store import create_record_file

BASE_ID = "20261130T231000Z-baseline-797fdbd"
EAGLE_ID = "20261130T231000Z-eagle3-339e97f"


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_cli_wiring() -> None:
    from bench.cli import build_parser

    for command in ("compare", "diff"):
        assert build_parser().parse_args([command, "a", "b"]).handler.__module__ == "bench.compare.commands"


def test_compare_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["compare", BASE_ID, EAGLE_ID]) == 0
    out = capsys.readouterr().out
    assert "Verdict: Indicative only: no compared ratio has an interval" in out
    assert "baseline is faster" not in out and "leads by" not in out
    assert "92.7" in out and "≈773" in out and "none (indicative)" in out


def test_compare_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["compare", BASE_ID, EAGLE_ID, "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "| C=1 | Per-request tok/s ↑ | 92.7 | 80.9 | 0.87× | none (indicative) | — / — |" in out
    assert out.startswith("**Verdict: eagle3 compared with baseline**\n\nIndicative only")
    # the compact table leads: levels as rows, both values and the ratio of each speed figure (muted: no interval)
    compact = out.split("<details>")[0]
    assert "| C=1 | 92.7 / 80.9 | _0.87×_ |" in compact


def test_compare_json_by_paths(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["compare", str(LAB_BASELINE), str(LAB_EAGLE3), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"]["ids"] == [BASE_ID] and data["candidate"]["ids"] == [EAGLE_ID]
    assert data["comparable"] is True and data["estimate"] == "point"
    assert [lv["key"] for lv in data["levels"]] == ["1", "saturation"]
    assert data["levels"][1]["metrics"][0]["ratio"] == pytest.approx(354 / 773)
    assert data["levels"][0]["winner"] == "indicative"
    assert data["levels"][0]["metrics"][0]["evidence"] == "indicative"
    assert data["verdict"].startswith("Indicative only")
    assert data["noise_floor"] == 0.05 and data["min_requests"] == 10 and data["cross_context"] is False


@pytest.mark.parametrize("fmt", ["text", "md", "json"])
def test_diff_formats(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["diff", "20261130T231000Z-baseline", "20261130T231000Z-eagle3", "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        data = json.loads(out)
        assert data["a"] == BASE_ID
        assert {"field": "speculative.algorithm", "role": "context", "a": None, "b": "EAGLE3"} in data["diff"]
    else:
        assert "speculative.algorithm" in out and "EAGLE3" in out and "not stated" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "nope", EAGLE_ID], "nope: no record with this id in records ("),
        (["diff", "missing/file.json", EAGLE_ID], "missing/file.json: no such record file"),
        (["compare", "2026", EAGLE_ID], "2026: ambiguous id prefix"),
        (["compare", BASE_ID, EAGLE_ID, "--records-dir", "/nonexistent"], "the records folder /nonexistent does not"),
        (["compare", BASE_ID, EAGLE_ID, "--settings", "nope.yaml"], "nope.yaml: no such settings file"),
        (["compare", BASE_ID, EAGLE_ID, "--n-boot", "0"], "--n-boot must be at least 1"),
    ],
)
def test_bad_input_exits_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and message in captured.err


def test_bad_record_file_and_bad_settings_name_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    data = json.loads(LAB_EAGLE3.read_text())
    data["workload"]["max_tokens"] = "lots"
    bad.write_text(json.dumps(data))
    assert _main(["diff", str(LAB_BASELINE), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "workload.max_tokens" in err
    settings = tmp_path / "benchbook.yaml"
    settings.write_text("regression:\n  window: -1\n")
    assert _main(["compare", BASE_ID, EAGLE_ID, "--settings", str(settings)]) == 2
    err = capsys.readouterr().err
    assert str(settings) in err and "regression.window" in err


def test_run_group_repeats_are_taken_in_unless_single(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "records"
    base = [record("baseline", [level(1, 100.0 + i, seed=i)], run_group="rg-a", suffix=f"{i:07x}") for i in range(3)]
    cand = record("eagle3", [level(1, 120.0, seed=9)], run_group="rg-b")
    other = record(
        "baseline", [level(1, 100.0)], run_group="rg-a", suffix="fffffff", overrides={"environment.gpu.count": 2}
    )  # same group, other configuration: not a repeat
    for r in [*base, cand, other]:
        create_record_file(root, r)
    common = [base[0].id, cand.id, "--records-dir", str(root), "--format", "json", "--n-boot", "50"]
    assert _main(["compare", *common]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data["baseline"]["ids"]) == sorted(r.id for r in base)
    assert data["levels"][0]["metrics"][0]["runs_baseline"] == 3
    assert _main(["compare", *common, "--single"]) == 0
    assert json.loads(capsys.readouterr().out)["baseline"]["ids"] == [base[0].id]
    assert _main(["compare", base[0].id, base[1].id, "--records-dir", str(root)]) == 2
    assert "runs of one configuration" in capsys.readouterr().err


def test_cross_context_pair_names_fields_first_and_the_flag_forces_a_labelled_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "records"
    base = record("baseline", [level(1, 100.0, seed=1)])
    cand = record(
        "eagle3",
        [level(1, 320.0, seed=2)],
        overrides={"server.engine": "vllm", "model.name": "other/model", "environment.gpu.model": "NVIDIA B200"},
    )
    for r in (base, cand):
        create_record_file(root, r)
    common = [base.id, cand.id, "--records-dir", str(root), "--n-boot", "200"]
    assert _main(["compare", *common]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Not comparable: the records differ in 3 context field(s)")
    assert lines[1:4] == [
        "  - environment.gpu.model: 'NVIDIA H200' vs 'NVIDIA B200'",
        "  - model.name: 'meta-llama/Llama-3.1-8B-Instruct' vs 'other/model'",
        "  - server.engine: 'sglang' vs 'vllm'",
    ]
    assert "Verdict: No verdict: baseline and eagle3 are not comparable." in out and "3.2×" not in out
    assert _main(["compare", *common, "--cross-context", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cross_context"] is True and data["comparable"] is False
    assert data["verdict"].startswith("Cross-context comparison (forced)")
    assert _main(["compare", *common, "--cross-context", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("**Cross-context comparison (forced)**")
    assert "**Verdict (cross-context): eagle3 compared with baseline**" in out
