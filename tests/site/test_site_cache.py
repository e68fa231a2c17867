"""The per-record cache of a site build: the same pages with and without it, and nothing stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from site_helpers import DOCS, ROOT

from bench.site import SiteCache, code_version, load_site, site_pages
from bench.site._site_data import SiteData


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
