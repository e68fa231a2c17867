"""Record pages outside the generator's pipeline (bench.site._page_shell): a body's cache key covers everything
the page is made from, and a shell filled per page is the template rendered for that page."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import jinja2
import pytest

from bench.git import UNCOMMITTED, RecordCommit
from bench.settings import Settings
from bench.site import (
    CONTENT_SENTINEL,
    FOLDER_SENTINEL,
    H1_URL_SENTINEL,
    NAME_SENTINEL,
    TITLE_SENTINEL,
    Shell,
    ShellError,
    SiteData,
    load_site,
    record_page_key,
    shell_key,
    shell_page,
    site_record_markdown,
    toc_shape,
)
from bench.site._git_info import GitInfo


def _pages(site: SiteData) -> dict[str, tuple[str, str]]:
    """Record id -> (its body's key, its page's Markdown)."""
    return {
        lr.record.id: (record_page_key(site, lr, "r"), site_record_markdown(site, lr.record)) for lr in site.records
    }


def _changed(before: SiteData, after: SiteData) -> set[str]:
    """The records whose key changed; fails if a page changed under an unchanged key (a stale cache entry)."""
    a, b = _pages(before), _pages(after)
    stale = [rid for rid in a.keys() & b.keys() if a[rid][0] == b[rid][0] and a[rid][1] != b[rid][1]]
    assert stale == [], f"pages changed under the same key: {stale}"
    return {rid for rid in a.keys() & b.keys() if a[rid][0] != b[rid][0]}


def _configuration_with_two(site: SiteData) -> list[str]:
    ids = next(ids for ids in ([r.id for r in recs] for recs in site.configurations.values()) if len(ids) >= 2)
    return ids


def test_a_changed_record_changes_its_key_and_its_successors_only(records: Path) -> None:
    before = load_site(records)
    first, second, *_ = _configuration_with_two(before)
    path = before.by_id[first].path
    data = json.loads(path.read_text(encoding="utf-8"))
    data["description"] = "Changed after the first build."
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert _changed(before, load_site(records)) == {first, second}


def test_a_new_record_of_a_configuration_changes_the_keys_of_that_configuration_only(records: Path) -> None:
    before = load_site(records)
    ids = _configuration_with_two(before)
    last = before.by_id[ids[-1]]
    data = json.loads(last.path.read_text(encoding="utf-8"))
    data["id"] = data["id"][:-7] + "fffffff"
    data["created_at"] = "2030-01-01T00:00:00Z"
    (last.path.parent / f"{data['id']}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    after = load_site(records)
    assert data["id"] in after.by_id and after.configuration_of[data["id"]] == before.configuration_of[ids[0]]
    # the new record is the newest: no older page of its configuration shows anything that changed
    assert _changed(before, after) == set()
    for rid in ids:
        assert site_record_markdown(before, before.by_id[rid].record) == site_record_markdown(
            after, after.by_id[rid].record
        )


def test_git_settings_and_renderer_are_in_the_key(records: Path) -> None:
    plain = load_site(records)
    rid, other = plain.records[0].record.id, plain.records[1].record.id
    when = datetime(2026, 12, 1, tzinfo=UTC)
    commit = RecordCommit(sha="a" * 40, short_sha="aaaaaaa", author="someone", date=when, subject="add")
    site = replace(plain, git=GitInfo(commits={other: commit}))
    assert _changed(plain, site) == {lr.record.id for lr in plain.records}  # every page gains an "Added in" row
    committed = replace(site, git=GitInfo(commits={other: commit, rid: commit}))
    assert _changed(site, committed) == {rid}
    uncommitted = replace(site, git=GitInfo(commits={other: commit, rid: UNCOMMITTED}))
    assert _changed(committed, uncommitted) == {rid}
    linked = replace(site, git=GitInfo(commits={other: commit, rid: commit}, repository_url="https://example.org/r"))
    assert _changed(committed, linked) == {rid, other}
    wider = replace(site, settings=Settings.model_validate({"comparison": {"confidence": 0.9}}))
    assert all(record_page_key(site, lr, "r") != record_page_key(wider, lr, "r") for lr in site.records)
    assert record_page_key(site, site.records[0], "r") != record_page_key(site, site.records[0], "r2")


THEME = jinja2.Environment(autoescape=False).from_string(
    "<title>{{ title }} - site</title><a href='{{ h1 }}'>skip</a><link rel=canonical href='/x/{{ page }}'>"
    "<header>{{ title }}</header><main>{{ content }}</main><script src='../../a.js'></script>"
)


def _render(page: str, title: str, h1: str, content: str) -> str:
    return THEME.render(title=title, h1=h1, page=page.removesuffix(".md") + ".html", content=content)


def test_a_filled_shell_is_the_template_rendered_for_the_page() -> None:
    page = "records/exp/20261201T000000Z-base-abcdef1.md"
    assert shell_page(page) == f"records/exp/{NAME_SENTINEL}.md"
    marker = CONTENT_SENTINEL + '<h1 id="x">'
    shell = Shell.parse(_render(shell_page(page), TITLE_SENTINEL, H1_URL_SENTINEL, marker), content_marker=marker)
    content = '<h1 id="run-1">Run 1</h1><p>a &amp; b</p>'
    got = shell.fill(page=page, title="Run 1 (night 2)", h1_url="#run-1", content=content)
    assert got == _render(page, "Run 1 (night 2)", "#run-1", content)
    # one shell for every folder beside it: the folder is filled too
    generic = shell_page(page, any_folder=True)
    assert generic == f"records/{FOLDER_SENTINEL}/{NAME_SENTINEL}.md"
    shell = Shell.parse(_render(generic, TITLE_SENTINEL, H1_URL_SENTINEL, marker), content_marker=marker)
    for other in (page, "records/other-exp/20261202T000000Z-x-1234567.md"):
        assert shell.fill(page=other, title="T", h1_url="#t", content=content) == _render(other, "T", "#t", content)


def test_a_shell_refuses_what_it_cannot_fill() -> None:
    with pytest.raises(ShellError, match="exactly once"):
        Shell.parse(
            f"<main>{CONTENT_SENTINEL}</main><aside>{CONTENT_SENTINEL}</aside>", content_marker=CONTENT_SENTINEL
        )
    with pytest.raises(ShellError, match="cannot fill"):  # a theme that changed the title's case
        Shell.parse(f"<title>{TITLE_SENTINEL.upper()}</title>{CONTENT_SENTINEL}", content_marker=CONTENT_SENTINEL)


def test_a_shell_key_is_the_pages_folder_heading_and_table_of_contents_shape() -> None:
    toc = [
        {"level": 1, "id": "run-a", "title": "Run A", "children": [{"level": 2, "id": "summary", "title": "Summary"}]},
    ]
    other_title = [{**toc[0], "id": "run-b", "title": "Run B"}]  # another record's page: its own h1, same sections
    more = [{**toc[0], "children": [*toc[0]["children"], {"level": 2, "id": "levels", "title": "Levels"}]}]
    key = shell_key("records/exp/a.md", toc, True)
    assert shell_key("records/exp/b.md", other_title, True) == key
    assert shell_key("records/exp/a.md", more, True) != key
    assert shell_key("records/other/a.md", toc, True) != key
    assert shell_key("records/other/a.md", toc, True, any_folder=True) == shell_key(
        "records/exp/a.md", toc, True, any_folder=True
    )
    assert shell_key("records/exp/a.md", toc, False) != key
    for t in (toc, other_title, more):  # the shape kept from the last build gives the same key
        assert shell_key("records/exp/a.md", t, True, shape=toc_shape(t)) == shell_key("records/exp/a.md", t, True)
    assert json.loads(key) == [shell_page("records/exp/a.md"), True, json.loads(toc_shape(toc))]
