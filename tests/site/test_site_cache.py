"""The per-record cache of a site build: the same pages with and without it, and nothing stale."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from site_helpers import DOCS, ROOT

import bench.site._comparisons as comparisons
import bench.site._site_data as site_data
import bench.site._site_records as site_records
from bench.compare import comparison_frame
from bench.dataframe import frame_csv, frame_from_rows, frame_json
from bench.record.load import load_record
from bench.site import VERSION_GRACE_S, SiteCache, code_version, load_site, site_pages
from bench.site._cache import USED
from bench.site._paths import (
    all_rows_download,
    comparison_download,
    experiment_download,
    history_download,
    record_csv,
    record_json,
)
from bench.site._site_data import SiteData
from bench.site._site_load import redacted_record
from bench.site._text_parts import TextParts


def _pages(site: SiteData) -> dict[str, str]:
    return dict(site_pages(site))


def test_cached_builds_write_the_same_pages(tmp_path: Path, records: Path) -> None:
    plain = _pages(load_site(records, DOCS))
    cold_cache = SiteCache(tmp_path / "cache", version="v1")
    cold = load_site(records, DOCS, cache=cold_cache)
    assert _pages(cold) == plain
    assert cold_cache.hits == 0 and cold_cache.misses > 0
    warm_cache = SiteCache(tmp_path / "cache", version="v1")
    warm = load_site(records, DOCS, cache=warm_cache)
    assert [warm.whole(r.record) for r in warm.records] == [cold.whole(r.record) for r in cold.records]
    uncached = load_site(records, DOCS)
    assert [warm.whole(r.record) for r in warm.records] == [uncached.whole(r.record) for r in uncached.records]
    assert [r.raw for r in warm.records] == [r.raw for r in cold.records]
    assert warm.rows == cold.rows
    assert _pages(warm) == plain
    assert warm_cache.misses == 0 and warm_cache.hits == len(warm.records)  # each record with its rows


def test_a_changed_record_is_read_again(tmp_path: Path, records: Path) -> None:
    cache = SiteCache(tmp_path / "cache", version="v1")
    _ = load_site(records, DOCS, cache=cache).rows
    path = next(records.glob("eagle-fast-verify/*baseline*.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = "A title changed after the first build"
    data["levels"][0]["duration_s"] = data["levels"][0].get("duration_s", 1.0) * 2
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    again = SiteCache(tmp_path / "cache", version="v1")
    site = load_site(records, DOCS, cache=again)
    rows = site.rows
    assert again.misses == 1  # that record (with its rows)
    fresh = load_site(records, DOCS)
    assert rows == fresh.rows
    page = _pages(site)[f"records/eagle-fast-verify/{data['id']}.md"]
    assert "A title changed after the first build" in page
    assert page == _pages(fresh)[f"records/eagle-fast-verify/{data['id']}.md"]


def test_a_change_to_benchbook_misses_everything(tmp_path: Path, records: Path) -> None:
    package = tmp_path / "bench"
    shutil.copytree(ROOT / "bench", package, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_version(package)
    renderer = package / "site" / "_record_page.py"
    renderer.write_text(renderer.read_text(encoding="utf-8") + "\n# a renderer changed\n", encoding="utf-8")
    after = code_version(package)
    assert before != after and code_version(package) == after
    _ = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version=before)).rows
    other = SiteCache(tmp_path / "cache", version=after)
    _ = load_site(records, DOCS, cache=other).rows
    assert other.hits == 0 and other.misses > 0


def test_a_bad_record_is_reported_every_time(tmp_path: Path, records: Path) -> None:
    bad = records / "eagle-fast-verify" / "20261201T120000Z-baseline-0000000.json"
    bad.write_text('{"id": "20261201T120000Z-baseline-0000000"}', encoding="utf-8")
    for _ in range(2):
        site = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
        assert any(str(bad.name) in str(e) for e in site.errors)


def test_a_warm_build_bootstraps_nothing_and_writes_the_same_pages(
    tmp_path: Path, records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _pages(load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1")))
    assert any((tmp_path / "cache").glob("*/intervals/*/*.json"))  # comparisons' and bands' intervals kept

    def no_bootstrap(*args: object, **kwargs: object) -> object:
        raise AssertionError("a warm build bootstrapped")

    monkeypatch.setattr("bench.compare._interval.bootstrap_many", no_bootstrap)
    warm_cache = SiteCache(tmp_path / "cache", version="v1")
    assert _pages(load_site(records, DOCS, cache=warm_cache)) == cold
    assert warm_cache.interval_hits > 0
    monkeypatch.undo()
    # a kept interval is what the bootstrap gives: the same pages without any cache
    assert _pages(load_site(records, DOCS)) == cold


def _downloads(site: SiteData) -> dict[str, str]:
    return {path: str(text) for path, text in site_pages(site) if path.endswith((".csv", ".json"))}


def _with_microseconds(records: Path) -> None:
    """One record measured with microseconds: every multi-record CSV holding it then writes them in each row."""
    path = next(records.glob("eagle-fast-verify/*eagle3*.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["created_at"] = data["created_at"].replace("Z", ".250001Z").replace("+00:00", ".250001+00:00")
    assert ".250001" in data["created_at"]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_downloads_are_the_same_bytes_with_and_without_a_warm_cache(
    tmp_path: Path, records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every CSV and JSON download of a build, uncached, cold and warm: the same bytes; and a warm build writes
    them without formatting a cell, comparing or restoring a sample (records whose times all have whole seconds, as
    ``bench run`` writes them: a record with microseconds among them makes the others' CSV lines be written again)."""
    plain = _downloads(load_site(records, DOCS))
    assert _downloads(load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))) == plain
    warm_cache = SiteCache(tmp_path / "cache", version="v1")
    warm = load_site(records, DOCS, cache=warm_cache)
    assert warm_cache.misses == 0
    for module in (site_data, site_records, comparisons):
        for name in ("record_text", "csv_lines", "whole_record", "load_record", "frame_rows", "compare_records"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, _refused)
    everyone = [r.record.id for r in warm.records]
    found = {record_json(r.record): r.raw for r in warm.records}
    found |= {record_csv(r.record): warm.csv_of([r.record.id]) for r in warm.records}
    found[all_rows_download("csv")] = warm.csv_of(everyone)
    found[all_rows_download("json")] = warm.json_of(everyone)
    for exp, loaded in warm.experiments.items():
        found[experiment_download(exp, "csv")] = warm.csv_of(r.record.id for r in loaded)
        found[experiment_download(exp, "json")] = warm.json_of(r.record.id for r in loaded)
    for key, recs in warm.configurations.items():
        found[history_download(key, "csv")] = warm.csv_of(r.id for r in recs)
        found[history_download(key, "json")] = warm.json_of(r.id for r in recs)
    compared = {}
    for exp in warm.experiments:  # the comparisons' downloads: kept, not compared again
        compared |= comparisons.experiment_comparison_downloads(warm, exp)
    monkeypatch.undo()
    assert len(compared) >= 6 and all(path.endswith((".csv", ".json")) for path in compared)
    found |= compared
    assert found == {path: plain[path] for path in found}
    assert _downloads(warm) == plain


def _refused(*_: object, **__: object) -> None:
    raise AssertionError("a warm build formatted a download's cells or restored a record for it")


def test_downloads_of_rows_are_what_pandas_writes_and_raw_json_is_the_shown_record(
    tmp_path: Path, records: Path
) -> None:
    """The site's downloads of rows against the pandas path (``frame_csv``/``frame_json`` of ``frame_from_rows``),
    its raw JSON against the record read and redacted afresh; one record's times with microseconds (every CSV
    holding it writes them in each row), the same bytes uncached, cold and warm."""
    _with_microseconds(records)
    site = load_site(records, DOCS)
    files = _downloads(site)
    for _ in ("cold", "warm"):
        assert _downloads(load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))) == files
    everyone = [r.record.id for r in site.records]
    expected = {all_rows_download("csv"): everyone}
    expected |= {record_csv(r.record): [r.record.id] for r in site.records}
    expected |= {experiment_download(exp, "csv"): [r.record.id for r in lrs] for exp, lrs in site.experiments.items()}
    expected |= {history_download(key, "csv"): [r.id for r in recs] for key, recs in site.configurations.items()}
    micro = 0
    for path, ids in expected.items():
        frame = frame_from_rows(site.rows_of(ids))
        assert files[path] == frame_csv(frame), path
        micro += ".250001+00:00" in files[path]
        if not path.startswith("records/") or path == all_rows_download("csv"):
            json_path = path.removesuffix(".csv") + ".json"
            assert files[json_path] == frame_json(frame), json_path
    assert micro >= 4  # the record's own CSV, its experiment's, its configuration's, all rows
    for r in site.records:
        assert files[record_json(r.record)] == redacted_record(load_record(r.path)).raw
    compared = [c for c in site.comparisons.values() if comparison_download(c.ids_a[0], c.ids_b[0], "csv") in files]
    assert len(compared) >= 3
    for c in compared:
        assert files[comparison_download(c.ids_a[0], c.ids_b[0], "csv")] == frame_csv(comparison_frame(c))


def test_records_kept_between_builds_of_one_process(tmp_path: Path, records: Path) -> None:
    """Under `mkdocs serve` (keep_loaded_records): an unchanged file's lean record and rows are the same objects
    again, nothing read from the cache; a changed file is loaded afresh; off, nothing is kept."""
    from bench.site import keep_loaded_records

    keep_loaded_records()
    try:
        first = load_site(records, cache=SiteCache(tmp_path / "cache"))
        path = first.records[0].path
        data = json.loads(path.read_text(encoding="utf-8"))
        data["description"] = "Changed between two builds."
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        cache = SiteCache(tmp_path / "cache")
        second = load_site(records, cache=cache)
        assert cache.hits == 0 and cache.misses == 1  # only the changed file was looked up (and not found)
        changed = second.by_id[data["id"]].record
        assert changed.description == "Changed between two builds."
        for a, b in zip(first.records[1:], second.records[1:], strict=True):
            assert b.record is a.record and second.rows_of([b.record.id]) == first.rows_of([a.record.id])
        assert [r.raw for r in second.records[1:]] == [r.raw for r in first.records[1:]]
        assert _pages(second) == _pages(load_site(records))  # the same site as a fresh load
    finally:
        keep_loaded_records(False)
    third = load_site(records, cache=SiteCache(tmp_path / "cache"))
    assert all(c.record is not b.record for b, c in zip(second.records, third.records, strict=True))


def test_records_read_in_several_processes_keep_their_own_downloads(tmp_path: Path, records: Path) -> None:
    """The processes that read the records keep each record's JSON and CSV downloads (the build's generator then
    links them, recalled by the keys it gives them); the bytes are those the generator would write."""
    cache = SiteCache(tmp_path / "c")
    site = load_site(records, cache=cache, workers=2)
    assert len(site.records) >= site_records.MIN_PARALLEL  # read in children, not in this process
    pages = dict(site_pages(site))
    found: list[Path] = []
    for loaded in site.records:
        for path in (record_json(loaded.record), record_csv(loaded.record)):
            content = pages[path]
            assert isinstance(content, TextParts) and content.key is not None
            recalled = cache.outputs.recall(content.key)
            assert recalled is not None, path
            kept = Path(recalled)
            assert kept.read_bytes() == str(content).encode("utf-8"), path
            assert kept.name in cache.outputs.used  # not pruned as unused
            found.append(kept)
    assert len(set(found)) == 2 * len(site.records)
    # a kept file changed after the child kept it is not taken (the generator makes the download itself)
    with found[0].open("ab") as fh:
        fh.write(b" ")
    assert cache.outputs.recall(pages[record_json(site.records[0].record)].key) is None  # type: ignore[union-attr]
    # read in this process alone, nothing is kept ahead of the generator
    alone = SiteCache(tmp_path / "alone")
    one = load_site(records, cache=alone)
    assert all(alone.outputs.recall(pages[record_csv(r.record)].key) is None for r in one.records)  # type: ignore[union-attr]


def test_records_read_in_several_processes_load_the_same_site(tmp_path: Path, records: Path) -> None:
    bad = records / "h200-ngram" / "20261201T000000Z-broken-0000000.json"
    bad.write_text('{"schema_version": 2, "id": ', encoding="utf-8")  # a bad file among them: reported once
    one = load_site(records, cache=SiteCache(tmp_path / "c1"))
    cache = SiteCache(tmp_path / "c2")
    two = load_site(records, cache=cache, workers=2)
    assert cache.hits == len(two.records) and cache.misses == 1  # the children read every good record into it
    assert [str(e) for e in two.errors] == [str(e) for e in one.errors] and len(one.errors) == 1
    assert [two.whole(r.record) for r in two.records] == [one.whole(r.record) for r in one.records]
    assert [r.raw for r in two.records] == [r.raw for r in one.records]
    assert two.rows == one.rows
    assert _pages(two) == _pages(one)


def test_other_code_versions_unused_for_the_grace_are_removed_and_nothing_else(tmp_path: Path) -> None:
    """Every change of benchbook starts a new code version's folder; one no build used for VERSION_GRACE_S goes
    (``SiteCache.prune_versions``), whatever else lies in the cache folder stays."""
    root = tmp_path / "cache"
    now = time.time()
    day = 86400.0

    def aged(path: Path, days: float) -> None:
        os.utime(path, (now - days * day, now - days * day))

    def version(name: str, days: float, *, marked: bool = True) -> Path:
        folder = root / name
        (folder / "record" / "ab").mkdir(parents=True)
        (folder / "record" / "ab" / "ab12.pickle").write_bytes(b"entry")
        if marked:
            (folder / USED).touch()
            aged(folder / USED, days)
        aged(folder, days)
        return folder

    mine = SiteCache(root, version="a" * 64)
    mine.mark_used()
    aged(mine.folder / USED, 30)  # this build's own version: never removed, however old its mark
    grace_days = VERSION_GRACE_S / day
    version("b" * 24, grace_days + 1)  # used, but not for longer than the grace: removed
    version("c" * 24, grace_days - 1)  # used within it: kept
    version("d" * 24, grace_days + 5, marked=False)  # from before builds marked: its folder's own time
    version("e" * 24, 1, marked=False)
    (root / "files" / "ab").mkdir(parents=True)  # the kept files (Outputs.prune's)
    aged(root / "files", 60)
    (root / "offline").mkdir()
    aged(root / "offline", 60)
    stranger = version("f" * 23, 60)  # not named as a code version's folder
    assert mine.prune_versions(now=now) == ["b" * 24, "d" * 24]
    assert sorted(p.name for p in root.iterdir()) == ["a" * 24, "c" * 24, "e" * 24, "f" * 23, "files", "offline"]
    assert (stranger / "record" / "ab" / "ab12.pickle").read_bytes() == b"entry"
    # a build of a version marks it used: an old folder built again is kept
    aged(root / ("c" * 24) / USED, grace_days + 1)
    SiteCache(root, version="c" * 64).mark_used()
    assert mine.prune_versions(now=time.time()) == []
    assert (root / ("c" * 24)).is_dir()


def test_a_cache_folder_that_cannot_be_listed_or_written_prunes_nothing(tmp_path: Path) -> None:
    missing = SiteCache(tmp_path / "nowhere", version="a" * 64)
    assert missing.prune_versions() == []
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    cache = SiteCache(blocked, version="a" * 64)
    cache.mark_used()  # cannot make its folder: nothing happens
    assert cache.prune_versions() == [] and blocked.read_text(encoding="utf-8") == "not a folder"
