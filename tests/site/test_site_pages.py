from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from site_helpers import (
    DOCS,
    FIXTURES,
    FX_BASELINE_ID,
    FX_EAGLE_ID,
    HOSTILE_ID,
    fixture,
    fixture_site,
    run_command,
    shipped_site,
)

from bench.settings import load_settings
from bench.site import history_index, load_site, record_markdown, site_pages


def test_site_pages_lists_every_generated_file() -> None:
    site = shipped_site()
    paths = [p for p, _ in site_pages(site)]
    assert len(paths) == len(set(paths))
    assert {
        "records/index.md",
        "experiments/index.md",
        "dead-ends/index.md",
        "experiments/eagle-fast-verify.md",
        "history/index.md",
    } <= set(paths)
    for loaded in site.records:
        r = loaded.record
        for ext in ("md", "json", "csv"):
            assert f"records/{r.experiment}/{r.id}.{ext}" in paths


def test_raw_json_is_the_file_verbatim() -> None:
    site = fixture_site()
    pages = dict(site_pages(site))
    for loaded in site.records:
        assert pages[f"records/{loaded.record.experiment}/{loaded.record.id}.json"] == loaded.path.read_text("utf-8")


def test_measured_record_page_shows_distributions_status_and_speculation() -> None:
    md = record_markdown(fixture(FX_EAGLE_ID))
    assert '!!! warning "Run partial"' in md
    assert "Failed at concurrency 64." in md
    assert "RuntimeError: CUDA error: out of memory" in md  # log excerpt, in a code block
    assert "## Latency and per-request distributions" in md
    assert "| Level | Figure | mean | p50 | p90 | p99 | min | max | n |" in md
    assert "## Speculative decoding, per level" in md
    assert "per\\-request meta\\_info\\.spec\\_verify\\_ct" in md
    assert "<svg" in md


def test_errors_table_for_failed_requests() -> None:
    md = record_markdown(fixture(FX_BASELINE_ID))
    assert "## Errors" in md
    assert "| C=64 | 3.1% | **yes** | timeout: 2 |" in md


def test_transcribed_record_says_what_is_not_stated() -> None:
    md = record_markdown(shipped_site().records[0].record)
    assert "Provenance: transcribed" in md
    assert "Not stated for any level of this record:" in md
    assert "≈" in md


def _record_csv(record_id: str) -> list[dict[str, str]]:
    """The record page's CSV download, as the site generates it."""
    site = fixture_site()
    rec = site.by_id[record_id].record
    files = dict(site_pages(site))
    return list(csv.DictReader(io.StringIO(str(files[f"records/{rec.experiment}/{rec.id}.csv"]))))


def test_csv_has_one_row_per_level_and_flags_approximations() -> None:
    rows = _record_csv(FX_EAGLE_ID)
    record = fixture(FX_EAGLE_ID)
    assert [r["concurrency"] for r in rows] == ["1", "2", "4", "8", "16", "32"]
    first = record.levels[0]
    assert first.ttft_ms is not None and first.ttft_ms.p99 is not None
    assert float(rows[0]["ttft_p99"]) == first.ttft_ms.p99 and rows[0]["ttft_p99_n"] == str(first.ttft_ms.n)
    assert rows[0]["accept_length"]
    hostile = _record_csv(HOSTILE_ID)
    assert hostile[1]["level_label"].startswith("<script>")  # CSV is data, not HTML; kept verbatim
    assert hostile[1]["total_throughput_approx"] == "True"


def test_bench_render_writes_the_same_pages(tmp_path: Path) -> None:
    out = tmp_path / "out"
    settings_file = DOCS.parent / "benchbook.yaml"
    argv = ["render", str(out), "--records", str(FIXTURES), "--docs", str(DOCS), "--settings", str(settings_file)]
    assert run_command(argv) == 0
    # bench render reads the Reliability page's cases from the repository it runs in
    site = load_site(FIXTURES, DOCS, settings=load_settings(settings_file), git=True, repository=Path.cwd())
    for path, content in site_pages(site):
        assert (out / path).read_text(encoding="utf-8") == content
    eagle = (out / "eagle-fast-verify.md").read_text(encoding="utf-8")
    assert "<!-- bench:" not in eagle and "| Level | Figure | baseline | eagle3 |" in eagle
    assert "history/index.md" in dict(site_pages(site))
    dead_end = (out / "dead-ends" / "dynamic-spec-disable.md").read_text(encoding="utf-8")
    assert dead_end.startswith("---\n") and '!!! abstract "Dead end: abandoned"' in dead_end
    assert json.loads((out / "records" / "eagle-fast-verify" / f"{FX_BASELINE_ID}.json").read_text())["id"]


def test_bench_render_reports_bad_records(tmp_path: Path, capsys: object) -> None:
    records = tmp_path / "records" / "x"
    records.mkdir(parents=True)
    (records / "bad.json").write_text("{", encoding="utf-8")
    assert run_command(["render", str(tmp_path / "out"), "--records", str(tmp_path / "records")]) == 1


def test_record_page_levels_table_agrees_with_its_csv_download() -> None:
    site = fixture_site()
    rec = site.by_id[FX_EAGLE_ID].record
    files = dict(site_pages(site))
    page = files[f"records/{rec.experiment}/{rec.id}.md"]
    rows = {
        r["level_name"]: r for r in csv.DictReader(io.StringIO(str(files[f"records/{rec.experiment}/{rec.id}.csv"])))
    }
    table = page.split("## Levels", 1)[1].split("</div>", 1)[0]
    lines = [ln for ln in table.splitlines() if ln.startswith("| ")]
    header = [h.strip().replace("\\", "") for h in lines[0].strip("|").split("|")]
    col = header.index("Total throughput (tok/s)")
    checked = 0
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        level = cells[0].replace("\\", "")
        shown = cells[col].lstrip("≈").replace(",", "")
        if shown != "—":
            assert float(shown) == pytest.approx(float(rows[level]["total_throughput"]), rel=0.006)
            checked += 1
    assert checked == len(rec.levels)


def test_all_levels_download_holds_every_record_level_and_is_linked_from_both_indexes() -> None:
    site = fixture_site()
    files = dict(site_pages(site))
    rows = list(csv.DictReader(io.StringIO(str(files["records/all-levels.csv"]))))  # given in parts (TextParts)
    assert len(rows) == sum(len(lr.record.levels) for lr in site.records) > 0
    assert {r["record_id"] for r in rows} == {lr.record.id for lr in site.records}
    as_json = json.loads(str(files["records/all-levels.json"]))
    assert [r["record_id"] for r in as_json] == [r["record_id"] for r in rows]
    assert "](all-levels.csv)" in str(files["records/index.md"])
    assert "](../records/all-levels.json)" in history_index(site)


def test_record_page_lists_every_gpu_and_the_topology() -> None:
    """A 2-GPU record: one row per GPU with its own facts (the second GPU's power limit differs), and the
    topology matrix as a code block, rows intact."""
    base = fixture(FX_BASELINE_ID)
    gpu = base.environment.gpu.model_copy(
        update={
            "count": 2,
            "devices": [
                {"index": 0, "model": "NVIDIA H200", "memory_mib": 143771, "power_limit_w": 700.0,
                 "clocks": {"max_sm_mhz": 1980}, "pci_bus_id": "00000000:18:00.0"},
                {"index": 1, "model": "NVIDIA H200", "memory_mib": 143771, "power_limit_w": 600.0,
                 "clocks": {"max_sm_mhz": 1980}, "pci_bus_id": "00000000:2A:00.0"},
            ],
        }
    )  # fmt: skip
    topo = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-47\nGPU1\tNV18\t X \t0-47"
    env = base.environment.model_copy(update={"gpu": gpu, "topology": topo})
    md = record_markdown(base.model_copy(update={"environment": env}))
    assert "| GPU 0 | NVIDIA H200 · 143771 MiB · 700 W · SM max 1980 MHz · bus 00000000:18:00\\.0 |" in md
    assert "| GPU 1 | NVIDIA H200 · 143771 MiB · 600 W · SM max 1980 MHz · bus 00000000:2A:00\\.0 |" in md
    block = md.split("GPU topology (`nvidia-smi topo -m`):", 1)[1]
    assert "GPU1\tNV18\t X \t0-47" in block.split("```")[1]
    # a record without devices or topology shows neither
    plain = record_markdown(base)
    assert "| GPU 0 |" not in plain and "GPU topology" not in plain
