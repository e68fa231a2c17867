"""The records index past one page's worth of records: per-experiment lists in parts, every record in one of them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from site_helpers import DOCS, FIXTURES, SHIPPED

from bench.site import load_site, site_pages
from bench.site._site_data import SiteData


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> SiteData:
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    return load_site(folder, DOCS)


def _record_links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)]*\d{8}T\d{6}Z-[^)]*)\.md\)", markdown)


def test_one_page_while_the_records_fit(site: SiteData) -> None:
    pages = dict(site_pages(site))
    assert not any(re.fullmatch(r"records/[^/]+/index(-\d+)?\.md", p) for p in pages)
    assert len(set(_record_links(pages["records/index.md"]))) == len(site.records)


def test_past_a_page_each_experiment_lists_its_records_in_parts(site: SiteData) -> None:
    per_page = 3
    pages = dict(site_pages(site, records_per_page=per_page))
    index = pages["records/index.md"]
    assert not _record_links(index)  # the index lists experiments now, not records
    seen: list[str] = []
    for exp, loaded in site.experiments.items():
        assert f"]({exp}/index.md)" in index
        parts = sorted(p for p in pages if re.fullmatch(rf"records/{re.escape(exp)}/index(-\d+)?\.md", p))
        assert len(parts) == -(-len(loaded) // per_page)
        ids_in_order = []
        for part in parts:
            ids = [link.rsplit("/", 1)[-1] for link in _record_links(pages[part])]
            assert 0 < len(set(ids)) <= per_page, part
            ids_in_order += list(dict.fromkeys(ids))
        newest_first = sorted(loaded, key=lambda r: (r.record.created_at, r.record.id), reverse=True)
        assert sorted(ids_in_order) == sorted(r.record.id for r in newest_first)
        seen += ids_in_order
        if len(parts) > 1:
            assert "[2](index-2.md)" in pages[f"records/{exp}/index.md"]
    assert sorted(seen) == sorted(r.record.id for r in site.records)
    # the record pages themselves are still written, once each
    assert all(f"records/{r.record.experiment}/{r.record.id}.md" in pages for r in site.records)


def test_cells_of_are_the_rows_columns(records: Path) -> None:
    """``SiteData.cells_of`` (what the records table reads its peaks from) is each row's cells in those columns."""
    site = load_site(records, DOCS)
    ids = [lr.record.id for lr in site.records]
    columns = ("output_throughput", "output_throughput_approx", "level", "record_id")
    want = [tuple(row[c] for c in columns) for row in site.rows_of(ids)]
    assert site.cells_of(ids, columns) == want and len(want) > 50
    assert any(v is not None for v, *_ in want) and {r for *_, r in want} == set(ids)
