"""Each record's part of the CSV and JSON downloads, as the loaded site holds it (``bench.site._site_records``
``RecordText``): compressed in memory, the same text back, and the downloads joined from those parts still what
pandas writes for the same rows."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from bench.dataframe import frame_csv, frame_json
from bench.site import SiteCache, load_site
from bench.site._cache import record_key

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


def test_the_every_record_downloads_after_a_new_record_copy_the_other_records_parts(
    synthetic: Path, tmp_path: Path
) -> None:
    """What a ``mkdocs serve`` rebuild does after one new record (``hooks/gen_pages.py``): the two downloads of every
    record's rows joined again, every other record's part copied from the last build's file, the text as pandas
    writes it."""
    records = tmp_path / "records"
    shutil.copytree(synthetic, records)
    cache_dir = tmp_path / "cache"

    def joined(made: list[str]) -> dict[str, bytes]:
        cache = SiteCache(cache_dir)
        site = load_site(records, cache=cache)
        ids = [lr.record.id for lr in site.records]
        out = {}
        for kind, want in (("csv", frame_csv), ("json", frame_json)):
            content = site.rows_download(ids, kind)

            def counted(key: str | None, make: Callable[[], str]) -> bytes:
                made.append(str(key))
                return make().encode("utf-8")

            parts = ((k, partial(counted, k, make)) for k, make in content.keyed_parts())
            path = cache.outputs.keep_joined(f"all.{kind}", parts)
            out[kind] = path.read_bytes()
            assert out[kind] == str(content).encode("utf-8") == want(site.frame_of(ids)).encode("utf-8")
        cache.finish()
        return out

    made: list[str] = []
    before = joined(made)
    assert len(made) == 2 * (12 + 2) - 1  # every record's part, the CSV header, the JSON document's ends
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic_records import _template_texts, synthetic_record
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rec = synthetic_record(250, 260, _template_texts())
    (records / rec["experiment"]).mkdir(exist_ok=True)
    (records / rec["experiment"] / f"{rec['id']}.json").write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    made.clear()
    after = joined(made)
    assert all(len(after[k]) > len(before[k]) for k in after)
    assert len(made) == 2 and all(m.startswith(_digest_of(records, rec)) for m in made)  # the new record's parts alone


def _digest_of(records: Path, rec: dict[str, Any]) -> str:
    rel = f"{rec['experiment']}/{rec['id']}.json"
    return record_key(rel, (records / rel).read_text(encoding="utf-8"))
