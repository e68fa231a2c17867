"""Importers keep one speculative vocabulary and refuse NaN/Infinity at the source field; the loader behind
``bench validate`` and ``bench check`` refuses them in records too (issue 9)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.cli import main
from bench.importers import parse_file
from bench.record import RecordError

FIX = Path(__file__).parent / "fixtures"
SGLANG = FIX / "sglang-bench_serving-constructed.jsonl"
VLLM = FIX / "vllm-bench-serve-constructed.json"
GUIDELLM = FIX / "guidellm-0.8.1-mock-server-concurrent-1-2.json"
PROJECT = Path(__file__).resolve().parents[2]
LAB = PROJECT / "records" / "eagle-fast-verify"
LAB_EAGLE = LAB / "20261130T231000Z-eagle3-339e97f.json"


# ---------------------------------------------------------------- speculative vocabulary


def test_vllm_acceptance_percentage_becomes_a_fraction_naming_its_source() -> None:
    (run,) = parse_file("vllm", VLLM)
    spec = run.level.speculative
    assert spec is not None and spec.acceptance_rate is not None and spec.accept_length is not None
    src = json.loads(VLLM.read_text())
    assert src["spec_decode_acceptance_rate"] == 62.5  # vLLM writes accepted / draft tokens x 100
    rate = spec.acceptance_rate
    assert rate.value == 0.625 and rate.unit == "ratio"
    assert rate.value == pytest.approx(src["spec_decode_accepted_tokens"] / src["spec_decode_draft_tokens"])
    assert rate.formula == "accepted draft tokens / proposed draft tokens = vllm spec_decode_acceptance_rate / 100"
    assert rate.source is not None and rate.source.startswith("vllm bench serve field spec_decode_acceptance_rate")
    assert VLLM.name in rate.source
    length = spec.accept_length
    assert length.value == 2.875 and length.unit == "tokens/step"
    assert length.source is not None and "spec_decode_acceptance_length" in length.source


def test_vllm_acceptance_percentage_out_of_range_is_refused(tmp_path: Path) -> None:
    data = json.loads(VLLM.read_text())
    data["spec_decode_acceptance_rate"] = 162.5
    bad = tmp_path / "v.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("vllm", bad)
    assert exc.value.field == "spec_decode_acceptance_rate" and "a percentage from 0 to 100" in exc.value.expected


def test_sglang_keeps_accept_length_and_says_the_acceptance_rate_is_missing() -> None:
    run = parse_file("sglang", SGLANG)[1]  # the C=1 line
    spec = run.level.speculative
    assert spec is not None and spec.accept_length is not None and spec.accept_length.value == 2.61
    assert spec.accept_length.source == f"sglang bench_serving field accept_length ({SGLANG.name} line 2)"
    assert spec.acceptance_rate is None  # never converted from the accept length
    assert spec.missing and spec.missing[0].startswith("acceptance_rate: sglang bench_serving reports no")


# ---------------------------------------------------------------- NaN / Infinity at the source field


def _vllm_with(tmp_path: Path, edit: Any) -> Path:
    data = json.loads(VLLM.read_text())
    edit(data)
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # json.dumps writes NaN / Infinity tokens
    return path


@pytest.mark.parametrize(
    ("edit", "field", "got"),
    [
        (lambda d: d.update(mean_ttft_ms=math.nan), "mean_ttft_ms", "NaN"),
        (lambda d: d.update(output_throughput=math.inf), "output_throughput", "Infinity"),
        (lambda d: d["ttfts"].__setitem__(2, -math.inf), "ttfts[2]", "-Infinity"),
        (lambda d: d.update(spec_decode_acceptance_rate=math.nan), "spec_decode_acceptance_rate", "NaN"),
        (lambda d: d.update(request_rate=math.nan), "request_rate", "NaN"),
    ],
)
def test_vllm_non_finite_is_refused_at_the_field(tmp_path: Path, edit: Any, field: str, got: str) -> None:
    path = _vllm_with(tmp_path, edit)
    with pytest.raises(RecordError) as exc:
        parse_file("vllm", path)
    assert exc.value.field == field
    # the words the record loader uses: one reader for records and other tools' JSON
    assert exc.value.expected == f"a finite number (got {got}: JSON has no NaN or Infinity)"
    assert str(exc.value) == f"{path}: field '{field}': a finite number (got {got}: JSON has no NaN or Infinity)"


def test_vllm_infinite_request_rate_is_a_setting_not_a_figure(tmp_path: Path) -> None:
    path = _vllm_with(tmp_path, lambda d: d.update(request_rate=math.inf))
    (run,) = parse_file("vllm", path)
    assert run.level.concurrency == 2


def test_sglang_non_finite_names_the_line_and_field(tmp_path: Path) -> None:
    lines = SGLANG.read_text().splitlines()
    obj = json.loads(lines[1])
    assert obj["request_rate"] == math.inf  # SGLang's own Infinity for "all at once" stays accepted
    obj["p99_ttft_ms"] = math.nan
    bad = tmp_path / "s.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(obj), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("sglang", bad)
    assert exc.value.field == "line 2: p99_ttft_ms"
    assert exc.value.expected == "a finite number (got NaN: JSON has no NaN or Infinity)"


def test_guidellm_non_finite_names_the_nested_path(tmp_path: Path) -> None:
    data = json.loads(GUIDELLM.read_text())
    data["benchmarks"][1]["metrics"]["output_tokens_per_second"]["successful"]["mean"] = math.inf
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("guidellm", bad)
    assert exc.value.field == "benchmarks[1].metrics.output_tokens_per_second.successful.mean"


def test_guidellm_yaml_nan_is_refused(tmp_path: Path) -> None:
    data = json.loads(GUIDELLM.read_text())
    data["benchmarks"][0]["duration"] = math.nan
    path = tmp_path / "report.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert ".nan" in path.read_text()
    with pytest.raises(RecordError) as exc:
        parse_file("guidellm", path)
    assert exc.value.field == "benchmarks[0].duration"


def test_import_cli_refuses_nan_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _vllm_with(tmp_path, lambda d: d.update(mean_tpot_ms=math.nan))
    out = tmp_path / "records"
    assert main(["import", "vllm", str(path), "--records-dir", str(out), "--experiment", "x"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: field 'mean_tpot_ms': a finite number (got NaN: JSON" in err and "nothing was written" in err
    assert not out.exists()


# ---------------------------------------------------------------- bench validate and bench check


def _nan_record(root: Path) -> Path:
    """A copy of a shipped record under a new id, one figure replaced by NaN (as a tool would write it)."""
    data = json.loads(LAB_EAGLE.read_text())
    data["id"] = "20261201T101500Z-eagle3-abc1234"
    text = json.dumps(data, indent=2).replace('"value": 80.9', '"value": NaN')
    assert "NaN" in text
    path = root / "records" / "eagle-fast-verify" / f"{data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_bench_validate_refuses_nan_naming_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _nan_record(tmp_path)
    assert main(["validate", str(path)]) != 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert str(path) in text and "levels[0].per_request_tok_s.value" in text and "finite number" in text


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def test_bench_check_refuses_nan_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    (root / "records").mkdir(parents=True)
    shutil.copytree(LAB, root / "records" / "eagle-fast-verify")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    _git(root, "checkout", "-q", "-b", "feature")
    _nan_record(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "a record with NaN")
    assert main(["check", "--repo", str(root), "--base", "main"]) == 1
    err = capsys.readouterr().err
    assert "levels[0].per_request_tok_s.value" in err and "finite number" in err
