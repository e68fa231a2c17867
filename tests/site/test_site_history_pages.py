"""A long history split into pages: every page under 1 MB of HTML, every row on exactly one page, pages linked
both ways, and a record page's link landing on the page that holds its rows."""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from site_helpers import FX_BASELINE_ID, fixture, site_markdown, site_of, with_figures

from bench.site import SiteCache, SiteData, site_pages, site_record_markdown
from bench.site._history_pages import history_link, history_pages
from bench.site._history_parts import HISTORY_PER_PAGE, ROWS_BUDGET, history_rows
from bench.site._paths import history_page, record_page

MB = 1_000_000
# The theme's shell around a page's content (navigation, header, footer): about 19 kB measured on a built history
# page; twice that allowed.
SHELL = 40_000
LINK = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")


@cache
def _long_site() -> SiteData:
    """One configuration measured 260 times whose figures swing by 35% every third record: a flag at nearly every
    swing, at every level and figure (thousands of flag rows, as a configuration whose level moves often gets)."""
    base = fixture(FX_BASELINE_ID)
    records = []
    for i in range(260):
        factor = 1.0 if (i // 3) % 2 == 0 else 0.65
        rid = f"20270101T{i // 60:02d}{i % 60:02d}00Z-baseline-ab{i:05x}"
        records.append(with_figures(base, rid, factor, minutes=i))
    return site_of(*records)


def _row_links(md: str, section: str) -> list[str]:
    """The record ids linked from the rows of one section's table(s) of a page."""
    body = md.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\|[^\n]*?\[[^\]]*\]\(\.\./records/[^/]+/([^)]+)\.md\)", body, re.M)]


def test_a_long_history_is_paged_under_a_megabyte_with_every_row_once() -> None:
    site = _long_site()
    (key,) = site.configurations
    flags = site.configuration_flags[key]
    records = site.configurations[key]
    pages = dict(history_pages(site, key))
    assert len(pages) >= 3
    # one page alone would be far past the bound: what the split is for
    assert len(flags) > 2000
    for path, md in pages.items():
        html = site_markdown().convert(md)
        assert len(html.encode()) + SHELL < MB, path
    # the newest records first, each record's row in the records table of exactly one page
    listed = [rid for md in pages.values() for rid in _row_links(md, "Records")]
    assert sorted(listed) == sorted(r.id for r in records)
    assert listed == [r.id for r in reversed(records)]
    # and its row in every figure table on that same page; every flag's row on exactly one page
    for path, md in pages.items():
        mine = set(_row_links(md, "Records"))
        figures = _row_links(md, "Figures by level")
        tables = md.count("\n### ")
        assert tables >= 3 and sorted(figures) == sorted(list(mine) * tables), path
        flagged = _row_links(md, "Regressions and improvements")
        assert set(flagged) <= mine, path
    flag_rows = sum(len(_row_links(md, "Regressions and improvements")) for md in pages.values())
    assert flag_rows == len(flags)
    # the first page keeps the summary: every flag counted in the status, the thresholds stated
    first = pages[history_page(key)]
    assert f"{len(records)} record(s)" in first and "**Status:**" in first and "A figure is flagged" in first


def test_history_pages_link_each_other_both_ways_and_only_to_pages_that_exist() -> None:
    site = _long_site()
    (key,) = site.configurations
    generated = {path for path, _ in site_pages(site) if path.endswith(".md")}
    paths = [path for path, _ in history_pages(site, key)]
    assert set(paths) <= generated
    for path in paths:
        md = dict(history_pages(site, key))[path]
        targets = {posixpath.normpath(posixpath.join(posixpath.dirname(path), t)) for t in LINK.findall(md)}
        assert targets - {path} >= set(paths) - {path}, path  # every other page of the history, from every page
        missing = {t for t in targets if t not in generated}
        assert not missing, (path, missing)


def test_the_pages_respect_their_bounds() -> None:
    site = _long_site()
    (key,) = site.configurations
    h = history_rows(site, key)
    for part in h.pages:
        assert 1 <= len(part) <= HISTORY_PER_PAGE
    # a budget of bytes: a page of many flags holds fewer records; a record never exceeds it alone here
    small = history_rows(site, key, budget=ROWS_BUDGET // 10)
    assert len(small.pages) > len(h.pages)
    assert [r.id for part in small.pages for r in part] == [r.id for r in h.newest_first]


def test_a_record_page_links_the_history_page_that_holds_its_rows() -> None:
    site = _long_site()
    (key,) = site.configurations
    pages = dict(history_pages(site, key))
    records = site.configurations[key]
    for record in (records[0], records[len(records) // 2], records[-1]):
        page = record_page(record)
        text = site_record_markdown(site, record)
        link = history_link(site, record, page)
        assert link in text
        targets = [posixpath.normpath(posixpath.join(posixpath.dirname(page), t)) for t in LINK.findall(link)]
        assert targets[0] == history_page(key)  # the summary first
        holder = targets[-1]
        assert record.id in _row_links(pages[holder], "Records"), (record.id, holder)
    # the newest record is on the first page: one link, no page number
    assert "page " not in history_link(site, records[-1], record_page(records[-1]))


@pytest.mark.parametrize("first", ["record pages", "history pages"])
def test_a_warm_build_finds_each_records_history_page_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    """Whichever the cold build made first, the record pages' links or the history pages (the generator's order),
    the next build finds each record's page in the cache without making the history's rows again."""
    import bench.site._history_parts as parts

    (key,) = _long_site().configurations
    cold = replace(_long_site(), cache=SiteCache(tmp_path))
    records = cold.configurations[key]
    if first == "history pages":
        assert len(list(history_pages(cold, key))) > 1
    expected = {r.id: parts.page_of(cold, key, r.id) for r in records}
    assert set(expected.values()) == set(range(1, len(history_rows(cold, key).pages) + 1))

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the history's rows made again")

    monkeypatch.setattr(parts, "history_rows", refuse)
    warm = replace(_long_site(), cache=SiteCache(tmp_path))
    assert {r.id: parts.page_of(warm, key, r.id) for r in records} == expected


def test_the_previous_record_is_the_one_measured_just_before_in_its_configuration() -> None:
    site = _long_site()
    seen = 0
    for recs in site.configurations.values():
        ordered = sorted(recs, key=lambda r: (r.provenance.measured_at or r.created_at, r.id))
        for i, r in enumerate(ordered):
            prev = site.previous_in_configuration(r)
            assert (prev.id if prev is not None else None) == (ordered[i - 1].id if i else None)
            seen += prev is not None
    assert seen > 5
