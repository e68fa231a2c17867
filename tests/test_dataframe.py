"""bench.frame(): every record × level as one DataFrame whose cells equal what the record files state (read here
from the raw JSON, not through the registry), and ``bench frame`` writing it as CSV or JSON."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import bench
from bench.cli import main
from bench.figures import FIGURES
from bench.record.load import load_record

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "records", ROOT / "tests" / "fixtures" / "records")


def _raw_levels() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            out += [(data["id"], lv) for lv in data["levels"]]
    return out


def _headline(metric: dict[str, Any] | None) -> float | None:
    if not metric:
        return None
    return next(float(metric[k]) for k in ("value", "mean", "p50", "p90", "p99") if metric.get(k) is not None)


def _key(lv: dict[str, Any]) -> str:
    return str(lv["concurrency"]) if lv.get("concurrency") is not None else str(lv["label"])


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    records = [load_record(p).record for folder in FOLDERS for p in sorted(folder.rglob("*.json"))]
    return bench.frame(records)


def test_one_row_per_record_and_level_with_the_stated_figures(frame: pd.DataFrame) -> None:
    raw = _raw_levels()
    assert len(frame) == len(raw)
    loaded = [load_record(p).record for folder in FOLDERS for p in folder.rglob("*.json")]
    failures = {(r.id, lv.key): lv.failure for r in loaded for lv in r.levels if lv.failure}
    rows = frame.set_index(["record_id", "level"])
    for rid, lv in raw:
        row = rows.loc[(rid, _key(lv))]
        spec = lv.get("speculative") or {}
        expected = {
            "total_throughput": _headline(lv.get("total_throughput")),
            "output_throughput": _headline(lv.get("output_throughput")),
            "per_request_tok_s": _headline(lv.get("per_request_tok_s")),
            "ttft_ms": _headline(lv.get("ttft_ms")),
            "ttft_p99": (lv.get("ttft_ms") or {}).get("p99"),
            "e2e_p50": (lv.get("e2e_ms") or {}).get("p50"),
            "accept_length": _headline(spec.get("accept_length")),
            "acceptance_rate": _headline(spec.get("acceptance_rate")),
            "cache_hit_share": (lv.get("prefix_cache") or {}).get("hit_share"),
        }
        for key, value in expected.items():
            got = row[key]
            assert pd.isna(got) if value is None else got == value, (rid, lv.get("concurrency"), key, got, value)
        n = (lv.get("ttft_ms") or {}).get("n")
        assert pd.isna(row["ttft_ms_n"]) if n is None else row["ttft_ms_n"] == n, (rid, key)
        done = lv.get("requests_completed")
        assert pd.isna(row["requests_completed"]) if done is None else row["requests_completed"] == done
        failure = lv.get("failure") or failures.get((rid, _key(lv)))  # v1 files: the migration names it
        assert pd.isna(row["level_failure"]) if failure is None else row["level_failure"] == failure
        total = lv.get("total_throughput")
        assert (
            pd.isna(row["total_throughput_approx"])
            if total is None
            else (bool(row["total_throughput_approx"]) == bool(total.get("approximate")))
        )


def test_record_columns_and_types(frame: pd.DataFrame) -> None:
    rec = load_record(ROOT / "records" / "eagle-fast-verify" / "20261130T231000Z-eagle3-339e97f.json").record
    row = frame[frame.record_id == rec.id].iloc[0]
    assert (row.experiment, row.variant, row.provenance, row.engine) == (
        "eagle-fast-verify",
        "eagle3",
        "transcribed",
        "sglang",
    )
    assert row.speculative == "EAGLE3" and row.configuration == f"eagle3@{row.fingerprint}"
    assert frame["created_at"].dt.tz is not None and str(frame["ttft_ms_n"].dtype) == "Int64"
    assert str(frame["total_throughput_approx"].dtype) == "boolean"
    assert [f"{f.key}{s}" for f in FIGURES[:1] for s in ("", "_lo", "_hi", "_n", "_approx")] == [
        c for c in frame.columns if c.startswith("per_request_tok_s") and not c.startswith("per_request_tok_s_e2e")
    ]


def test_intervals_where_the_record_holds_samples(frame: pd.DataFrame) -> None:
    sampled = frame[frame.per_request_tok_s_lo.notna()]
    assert len(sampled) > 20 and sampled.level_failure.isna().all()
    for key in ("per_request_tok_s", "total_throughput", "ttft_ms"):
        with_iv = frame[frame[f"{key}_lo"].notna()]
        # the interval of what the record states from its own samples contains the stated figure
        assert (with_iv[f"{key}_lo"] < with_iv[f"{key}_hi"]).all()
        assert (with_iv[f"{key}_lo"] <= with_iv[key] * (1 + 1e-9)).all() and (
            with_iv[key] <= with_iv[f"{key}_hi"] * (1 + 1e-9)
        ).all()
    transcribed = frame[frame.provenance == "transcribed"]
    assert transcribed.total_throughput_lo.isna().all()  # no samples: no interval


def test_text_cells_are_redacted() -> None:
    rec = load_record(ROOT / "records" / "eagle-fast-verify" / "20261130T231000Z-eagle3-339e97f.json").record
    leaky = rec.model_copy(update={"title": "served with key sk-proj-abcdefghijklmnop0123"})
    df = bench.frame([leaky], intervals=False)
    assert "sk-proj-abcdefghijklmnop0123" not in df.to_csv() and "<redacted>" in df.title.iloc[0]


def test_bench_frame_writes_csv_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = ROOT / "records"
    out = tmp_path / "frame.csv"
    assert main(["frame", "--records-dir", str(records), "--out", str(out), "--no-intervals"]) == 0
    csv_frame = pd.read_csv(out)
    expected = bench.frame(records, intervals=False)
    assert list(csv_frame.columns) == list(expected.columns) and len(csv_frame) == len(expected)
    assert csv_frame.total_throughput.tolist() == pytest.approx(expected.total_throughput.tolist(), nan_ok=True)
    assert main(["frame", "--records-dir", str(records), "--to", "json", "--columns", "record_id,level,ttft_p99"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert set(rows[0]) == {"record_id", "level", "ttft_p99"} and len(rows) == len(expected)


def test_bench_frame_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    out = tmp_path / "f.parquet"
    assert main(["frame", "--records-dir", str(ROOT / "records"), "--to", "parquet", "--out", str(out)]) == 2
    assert "needs pyarrow" in capsys.readouterr().err and not out.exists()
    assert main(["frame", "--records-dir", str(tmp_path / "none")]) == 2
    assert "a folder of records" in capsys.readouterr().err
    bad = tmp_path / "bad" / "x"
    bad.mkdir(parents=True)
    (bad / "broken.json").write_text("{", encoding="utf-8")
    assert main(["frame", "--records-dir", str(tmp_path / "bad")]) == 2
    assert "broken.json" in capsys.readouterr().err
    assert main(["frame", "--records-dir", str(ROOT / "records"), "--columns", "nope"]) == 2
    assert "unknown column(s) nope" in capsys.readouterr().err


def test_frame_csv_keeps_spreadsheets_from_reading_formulas() -> None:
    from bench.dataframe import frame_csv

    df = pd.DataFrame({"title": ["=HYPERLINK(1)", "plain"], "x": [-1.5, 2.0]})
    text = frame_csv(df)
    assert "'=HYPERLINK(1)" in text and "-1.5" in text  # a number stays a number
    assert pd.read_csv(io.StringIO(text)).x.tolist() == [-1.5, 2.0]


def _python_blocks(md: str) -> list[str]:
    return [b.split("```", 1)[0] for b in md.split("```python\n")[1:]]


def test_the_docs_page_examples_run_on_the_shipped_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block of docs/frame.md runs, in order, from the repository root, as a notebook would."""
    monkeypatch.chdir(ROOT)
    blocks = _python_blocks((ROOT / "docs" / "frame.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    scope: dict[str, Any] = {}
    for block in blocks:
        for statement in block.split("\n\n"):  # each paragraph is one notebook cell
            exec(compile(statement, "docs/frame.md", "exec"), scope)
    df = scope["df"]
    raw = [lv for p in (ROOT / "records").rglob("*.json") for lv in json.loads(p.read_text(encoding="utf-8"))["levels"]]
    assert isinstance(df, pd.DataFrame) and len(df) == len(raw)


def test_the_pivot_example_matches_medians_of_the_raw_records() -> None:
    """The `frame-pivot` shortcode (the docs page's "Out") against medians taken from the JSON files directly."""
    from statistics import median

    from bench.site import expand_shortcodes, load_site

    values: dict[tuple[int, str], list[float]] = {}
    for path in sorted((ROOT / "records" / "h200-ngram").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for lv in data["levels"]:
            v = _headline(lv.get("total_throughput"))
            if v is not None and lv.get("concurrency") is not None:
                values.setdefault((lv["concurrency"], data["variant"]), []).append(v)
    out = expand_shortcodes(
        "<!-- bench:frame-pivot experiment=h200-ngram figure=total_throughput -->",
        load_site(ROOT / "records"),
        "frame.md",
    )
    lines = [ln for ln in out.splitlines() if ln.startswith("|")]
    variants = [h.strip().replace("\\", "") for h in lines[0].strip("|").split("|")][1:]
    checked = 0
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        for variant, cell in zip(variants, cells[1:], strict=True):
            stated = values.get((int(cells[0]), variant))
            if stated is None:
                assert cell == "—", (cells[0], variant, cell)
                continue
            assert float(cell.replace(",", "")) == pytest.approx(median(stated), rel=0.005), (cells[0], variant)
            checked += 1
    assert checked == len(values) and {c for c, _ in values} == {int(ln.strip("|").split("|")[0]) for ln in lines[2:]}


def test_rows_of_each_record_made_together_are_its_rows_alone() -> None:
    # the site reads records cold in batches: each record's rows, intervals included, are what it gets alone, in the
    # order given (not the frame's), also for two records that share an id (a duplicate the loader reports later)
    from bench.dataframe import INTERVAL_BATCH, frame_rows, frame_rows_each

    records = [load_record(p).record for folder in FOLDERS for p in sorted(folder.rglob("*.json"))][::-1]
    twin = records[0].model_copy(update={"levels": records[0].levels[:1]})
    given = [*records, twin]
    assert len(given) > INTERVAL_BATCH  # more than one batch
    each = frame_rows_each(given)
    assert each == [frame_rows([r]) for r in given]
    assert len(each[-1]) == 1 and len(each[0]) == len(records[0].levels)
    assert any(row["per_request_tok_s_lo"] is not None for rows in each for row in rows)
