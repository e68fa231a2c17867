"""Importers on real and format-faithful fixtures: every figure kept, nothing guessed, round trip through the loader."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.cli import main
from bench.importers import build_records, group_runs, parse_file
from bench.record import Record, RecordError, create_record_file, load_record

FIX = Path(__file__).parent / "fixtures"
SGLANG = FIX / "sglang-bench_serving-constructed.jsonl"
VLLM = FIX / "vllm-bench-serve-constructed.json"
GUIDELLM = FIX / "guidellm-0.8.1-mock-server-concurrent-1-2.json"
GUIDELLM_LLAMA = FIX / "guidellm-0.8.1-llama-server-cpu-concurrent-1-2.json"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def records(fmt: str, *paths: Path, variant: str | None = None) -> list[Record]:
    runs = [r for p in paths for r in parse_file(fmt, p)]
    return build_records(group_runs(runs), experiment="imported-test", variant=variant, now=NOW)


def round_trip(tmp_path: Path, rec: Record) -> Record:
    path = create_record_file(tmp_path / "records", rec)
    return load_record(path).record


def test_sglang_sweep_grouped_sorted_and_every_figure_kept(tmp_path: Path) -> None:
    recs = records("sglang", SGLANG)
    assert len(recs) == 2  # random dataset sweep + the sharegpt run
    sweep = next(r for r in recs if len(r.levels) == 3)
    assert [lv.concurrency for lv in sweep.levels] == [1, 2, 4]
    lv = sweep.levels[0]
    src = json.loads(SGLANG.read_text().splitlines()[1])  # the C=1 line
    assert lv.requests_completed == src["completed"] == 10
    assert lv.duration_s == src["duration"]
    assert lv.output_throughput is not None and lv.output_throughput.value == src["output_throughput"]
    assert lv.request_throughput is not None and lv.request_throughput.value == src["request_throughput"]
    assert lv.ttft_ms is not None
    assert (lv.ttft_ms.mean, lv.ttft_ms.p50, lv.ttft_ms.p99, lv.ttft_ms.stdev, lv.ttft_ms.n) == (
        src["mean_ttft_ms"], src["median_ttft_ms"], src["p99_ttft_ms"], src["std_ttft_ms"], 10
    )  # fmt: skip
    assert lv.ttft_ms.p90 is None  # not in the source: unknown, not guessed
    assert lv.itl_ms is not None and "p95 = 10.2 ms" in (lv.itl_ms.note or "")
    assert lv.e2e_ms is not None and lv.e2e_ms.mean == src["mean_e2e_latency_ms"]
    assert lv.tpot_ms is not None and lv.tpot_ms.mean == src["mean_tpot_ms"]
    assert lv.output_tokens is not None and lv.output_tokens.total == src["total_output_tokens"]
    assert lv.input_tokens is not None and lv.input_tokens.total == src["total_input_tokens"]
    assert lv.total_throughput is None  # that version writes no total_throughput key
    assert lv.requests_sent is None and lv.samples is None
    acc = lv.speculative.accept_length if lv.speculative else None
    assert acc is not None and acc.value == 2.61 and "lifetime average" in (acc.note or "")
    # provenance and context
    assert sweep.provenance.kind == "imported"
    assert sweep.provenance.source == f"{SGLANG.name} (line 2, line 3, line 1)"
    assert "input_throughput" in (sweep.provenance.notes or "")  # figures without a field are kept
    assert sweep.server.engine == "sglang" and sweep.server.version == "0.5.4"
    assert sweep.model.name == "meta-llama/Llama-3.1-8B-Instruct"
    assert sweep.server.server_info is not None and sweep.server.server_info["speculative_algorithm"] == "EAGLE3"
    assert sweep.workload.prompt_set == "sglang dataset random"
    assert sweep.workload.temperature is None and sweep.workload.max_tokens is None
    assert sweep.variant == "sglang" and sweep.experiment == "imported-test"
    assert round_trip(tmp_path, sweep) == sweep


def test_vllm_result_with_details_samples_and_spec_decode(tmp_path: Path) -> None:
    (rec,) = records("vllm", VLLM, variant="eagle3")
    (lv,) = rec.levels
    assert lv.concurrency == 2
    assert (lv.requests_sent, lv.requests_completed, lv.requests_failed) == (5, 4, 1)
    assert lv.errors is not None and lv.errors.examples == ["TimeoutError: read timed out"]
    assert lv.total_throughput is not None and lv.total_throughput.value == 285.0
    assert lv.e2e_ms is not None and lv.e2e_ms.p99 == 949.4
    assert lv.samples is not None
    assert lv.samples.ttft_ms == pytest.approx([21.0, 25.0, 23.0, 30.0])  # the failed request is left out
    assert lv.samples.e2e_ms == pytest.approx([920.0, 930.0, 910.0, 950.0])
    assert lv.samples.output_tokens == [128, 128, 128, 128]
    spec = lv.speculative
    assert spec is not None and spec.accept_length is not None and spec.accept_length.value == 2.875
    assert (spec.draft_tokens, spec.accepted_tokens, spec.verify_steps) == (480, 300, 160)
    assert rec.server.engine == "vllm" and rec.model.name == "meta-llama/Llama-3.1-8B-Instruct"
    assert "20261201-101500" in (rec.provenance.notes or "")
    assert rec.provenance.measured_at is None  # the tool's date has no time zone
    assert rec.variant == "eagle3"
    assert round_trip(tmp_path, rec) == rec


def test_guidellm_real_report(tmp_path: Path) -> None:
    (rec,) = records("guidellm", GUIDELLM)
    raw = json.loads(GUIDELLM.read_text())
    assert [lv.concurrency for lv in rec.levels] == [1, 2]
    assert rec.provenance.tool == "guidellm 0.8.1"
    for lv, bench in zip(rec.levels, raw["benchmarks"], strict=True):
        m = bench["metrics"]
        assert lv.requests_completed == m["request_totals"]["successful"]
        assert lv.output_throughput is not None
        assert lv.output_throughput.value == m["output_tokens_per_second"]["successful"]["mean"]
        ttft = m["time_to_first_token_ms"]["successful"]
        assert lv.ttft_ms is not None and lv.ttft_ms.p50 == ttft["median"]
        assert lv.ttft_ms.p99 == ttft["percentiles"]["p99"]
        assert lv.e2e_ms is not None
        assert lv.e2e_ms.mean == pytest.approx(m["request_latency"]["successful"]["mean"] * 1000)
        assert lv.samples is not None and len(lv.samples.ttft_ms) == lv.requests_completed
    assert rec.model.name == "mock-model" and rec.server.engine == "unknown"
    assert round_trip(tmp_path, rec) == rec


def test_guidellm_real_report_against_llama_server(tmp_path: Path) -> None:
    """guidellm 0.8.1 against the real CPU llama-server: its token sums are floats such as 593.9999999999999."""
    (rec,) = records("guidellm", GUIDELLM_LLAMA)
    raw = json.loads(GUIDELLM_LLAMA.read_text())
    assert [lv.concurrency for lv in rec.levels] == [1, 2]
    for lv, bench in zip(rec.levels, raw["benchmarks"], strict=True):
        m = bench["metrics"]
        assert lv.requests_completed == m["request_totals"]["successful"]
        total = m["output_token_count"]["successful"]["total_sum"]
        assert lv.output_tokens is not None and lv.output_tokens.total == round(total)
    assert rec.model.name is not None and rec.model.name.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert round_trip(tmp_path, rec) == rec


def test_guidellm_yaml_report(tmp_path: Path) -> None:
    path = tmp_path / "report.yaml"
    path.write_text(yaml.safe_dump(json.loads(GUIDELLM.read_text())), encoding="utf-8")
    (rec,) = records("guidellm", path)
    assert [lv.concurrency for lv in rec.levels] == [1, 2]


def test_same_concurrency_twice_makes_two_records() -> None:
    recs = records("vllm", VLLM, VLLM)
    assert len(recs) == 2 and all(len(r.levels) == 1 for r in recs)


# ------------------------------------------------------------------ bad input


def test_truncated_jsonl_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "cut.jsonl"
    lines = SGLANG.read_text().splitlines()
    bad.write_text(lines[0] + "\n" + lines[1][:200] + "\n", encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("sglang", bad)
    assert exc.value.field.startswith("line 2 column")
    assert "valid JSON" in exc.value.expected


def test_foreign_jsonl_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "foreign.jsonl"
    bad.write_text('{"completed": 3, "duration": 1.0}\n{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("sglang", bad)
    assert exc.value.field == "line 2: completed"
    assert exc.value.expected == "Field required (got nothing)"


def test_wrong_type_names_the_field(tmp_path: Path) -> None:
    data = json.loads(VLLM.read_text())
    data["mean_ttft_ms"] = "fast"
    bad = tmp_path / "v.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("vllm", bad)
    assert exc.value.field == "mean_ttft_ms" and exc.value.expected == 'Input should be a valid number (got "fast")'


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (lambda d: d["ttfts"].__setitem__(1, "x"), "ttfts[1]", 'Input should be a valid number (got "x")'),
        (lambda d: d.update(failed=-1), "failed", "Input should be greater than or equal to 0 (got -1)"),
        (lambda d: d.update(completed=4.5), "completed", "Input should be a valid integer (got 4.5)"),
        (lambda d: d.update(completed=True), "completed", "Input should be a valid integer (got true)"),
        (lambda d: d.update(errors="none"), "errors", 'Input should be a valid list (got "none")'),
        (lambda d: d.pop("duration"), "duration", "Field required (got nothing)"),
    ],
)
def test_vllm_bad_values_name_the_field(tmp_path: Path, edit: Any, field: str, expected: str) -> None:
    data = json.loads(VLLM.read_text())
    edit(data)
    bad = tmp_path / "v.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("vllm", bad)
    assert (exc.value.field, exc.value.expected) == (field, expected)


def test_vllm_infinite_request_rate_as_vllm_writes_it(tmp_path: Path) -> None:
    data = json.loads(VLLM.read_text())
    data.update(request_rate="inf", max_concurrency=None)
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (run,) = parse_file("vllm", path)
    assert run.level.concurrency is None and run.level.label == "request rate inf"


def test_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    text = VLLM.read_text()
    bad = tmp_path / "v.json"
    bad.write_text(text.replace('"completed":', '"completed": 1, "completed":', 1), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("vllm", bad)
    assert exc.value.field == "completed" and "each key once" in exc.value.expected
    report = tmp_path / "report.yaml"
    report.write_text("metadata: {}\nmetadata: {}\nbenchmarks: []\n", encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("guidellm", report)
    assert exc.value.field == "line 2 column 1" and 'the key "metadata" appears twice' in exc.value.expected


def test_truncated_json_names_the_position(tmp_path: Path) -> None:
    bad = tmp_path / "cut.json"
    bad.write_text(GUIDELLM.read_text()[:5000], encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        parse_file("guidellm", bad)
    assert exc.value.field.startswith("line 1 column ") and "valid JSON" in exc.value.expected


def test_foreign_json_for_guidellm(tmp_path: Path) -> None:
    with pytest.raises(RecordError) as exc:
        parse_file("guidellm", VLLM)
    assert exc.value.field == "benchmarks"


def test_cli_writes_nothing_when_one_input_is_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cut.jsonl"
    bad.write_text(SGLANG.read_text()[:300], encoding="utf-8")
    out = tmp_path / "records"
    code = main(["import", "sglang", str(SGLANG), str(bad), "--records-dir", str(out), "--experiment", "x"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"{bad}: field 'line 1 column" in err and "nothing was written" in err
    assert not out.exists()


def test_cli_writes_records_and_dry_run_does_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "records"
    args = ["import", "sglang", str(SGLANG), "--records-dir", str(out), "--experiment", "eagle-import"]
    assert main([*args, "--dry-run"]) == 0
    assert "would write" in capsys.readouterr().out and not out.exists()
    assert main(args) == 0
    written = sorted(out.glob("eagle-import/*.json"))
    assert len(written) == 2
    for path in written:
        load_record(path)  # layout and schema
