"""Each record's part of the CSV and JSON downloads, as the loaded site holds it (``bench.site._site_records``
``RecordText``): compressed in memory, the same text back, and the downloads joined from those parts still what
pandas writes for the same rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.dataframe import frame_csv, frame_json
from bench.site import SiteCache, load_site

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic_records import _template_texts, synthetic_record
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    folder = tmp_path_factory.mktemp("records")
    templates = _template_texts()
    for i in range(0, 240, 20):
        rec = synthetic_record(i, 240, templates)
        path = folder / rec["experiment"] / f"{rec['id']}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("cached", [False, True])
def test_download_parts_are_held_compressed_and_give_the_same_text(
    synthetic: Path, tmp_path: Path, cached: bool
) -> None:
    cache = SiteCache(tmp_path / "cache")
    if cached:
        load_site(synthetic, cache=cache)  # fills the cache: the parts below come from its entries
    site = load_site(synthetic, cache=cache)
    texts = site.record_texts
    assert texts is not None and len(texts) == len(site.records) == 12
    held = sum(len(t.csv_z) + len(t.json_z) for t in texts.values())
    text = sum(len(t.csv) + len(t.json) for t in texts.values())
    assert held * 3 < text  # about 4.7x smaller on these records
    ids = [lr.record.id for lr in site.records]
    for some in (ids, ids[:1], ids[3:7]):
        frame = site.frame_of(some)
        assert site.csv_of(some) == frame_csv(frame)
        assert site.json_of(some) == frame_json(frame)
