"""Record pages show what the benchmark client itself spent per level (issue: is the client the limit?)."""

from __future__ import annotations

from pathlib import Path

from bench.record import load_records
from bench.site import record_markdown

REPO = Path(__file__).resolve().parents[2]


def test_measured_h200_record_page_shows_client_load() -> None:
    loaded = [r for r in load_records(REPO / "records").records if r.record.experiment == "h200-ngram"]
    rec = next(r.record for r in loaded if r.record.variant == "baseline")
    page = record_markdown(rec)
    assert "## Benchmark client load" in page
    c128 = next(lv for lv in rec.levels if lv.concurrency == 128)
    assert c128.client is not None
    assert f"| C=128 | {c128.client.cpu_percent:,.1f} |" in page


def test_transcribed_record_page_has_no_client_section() -> None:
    rec = next(r.record for r in load_records(REPO / "records").records if r.record.variant == "eagle3")
    assert "## Benchmark client load" not in record_markdown(rec)
