"""The fast table renderer of ``bench.site._prerender_cells`` writes byte for byte what its first, plain version wrote
(kept here as the reference), on every table of the site's pages (shipped and fixture records, 200 synthetic ones)
and on generated rows. The first version is itself checked against Python-Markdown by ``test_site_prerender.py``."""

from __future__ import annotations

import html
import re
import shutil
import sys
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from site_helpers import DOCS, FIXTURES, ROOT, SHIPPED

import bench.site._prerender as R
import bench.site._prerender_cells as P
from bench.site import expand_shortcodes, load_site, prerender, site_pages

Resolve = Callable[[str], str]


# ---- the reference: the first version, verbatim ----------------------------------------------------------------------
def _ref_inline(text: str, resolve: Resolve) -> str:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = P._INLINE.match(text, pos)
        if m is None:
            raise P._Unsupported(text[pos : pos + 20])
        pos = m.end()
        if m.group("esc") is not None:
            ch = m.group("ch")
            if ch not in P._ESCAPABLE:
                raise P._Unsupported(m.group(0))
            out.append(html.escape(ch, quote=False))
        elif m.group("code") is not None:
            out.append(f"<code>{html.escape(m.group('body').strip(), quote=False)}</code>")
        elif m.group("link") is not None:
            href = html.escape(resolve(m.group("url")), quote=True)
            out.append(f'<a href="{href}">{_ref_inline(m.group("text"), resolve)}</a>')
        elif m.group("strong") is not None:
            out.append(f"<strong>{_ref_inline(m.group('sbody'), resolve)}</strong>")
        elif m.group("em") is not None:
            out.append(f"<em>{_ref_inline(m.group('ebody'), resolve)}</em>")
        elif m.group("tag") is not None or m.group("entity") is not None:
            out.append(m.group(0))
        elif m.group("gt") is not None:
            out.append("&gt;")
        else:
            out.append(m.group(0))
    return "".join(out)


def _ref_split_row(row: str) -> list[str]:
    row = row.strip()
    if not (row.startswith("|") and row.endswith("|")) or row.endswith("\\|"):
        raise P._Unsupported(row)
    body = row[1:-1]
    cells: list[str] = []
    start = i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            run = len(body[i:]) - len(body[i:].lstrip("`"))
            close = body.find("`" * run, i + run)
            while close >= 0 and (close + run < len(body) and body[close + run] == "`"):
                close = body.find("`" * run, close + run + 1)
            if close < 0:
                raise P._Unsupported(row)
            i = close + run
            continue
        if c == "|":
            cells.append(body[start:i])
            start = i + 1
        i += 1
    cells.append(body[start:])
    return [c.strip() for c in cells]


def _ref_table(lines: Sequence[str], resolve: Resolve) -> str:
    header = _ref_split_row(lines[0])
    aligns = [P._align(c) for c in _ref_split_row(lines[1])]
    if len(aligns) != len(header) or len(lines) < 3:
        raise P._Unsupported(lines[0])
    out = ["<table>", "<thead>", "<tr>"]
    out += [f"<th{a}>{_ref_inline(c, resolve)}</th>" for c, a in zip(header, aligns, strict=True)]
    out += ["</tr>", "</thead>", "<tbody>"]
    for line in lines[2:]:
        cells = _ref_split_row(line)
        if len(cells) != len(header):
            raise P._Unsupported(line)
        out.append("<tr>")
        out += [f"<td{a}>{_ref_inline(c, resolve)}</td>" for c, a in zip(cells, aligns, strict=True)]
        out.append("</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------------------------------


def _both(lines: Sequence[str]) -> tuple[str | None, str | None]:
    def resolve(url: str) -> str:
        return "resolved/" + url.replace(".md", "/")

    results: list[str | None] = []
    for table in (_ref_table, P._table):
        try:
            results.append(table(lines, resolve))
        except P._Unsupported:
            results.append(None)
    return results[0], results[1]


@pytest.fixture(scope="module")
def site_tables(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    """The lines of every table prerender meets on every page of shipped, fixture and 200 synthetic records."""
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic_records import write_records
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    write_records(folder, 200)
    site = load_site(folder, DOCS)
    assert not site.errors and len(site.records) > 200
    pages = [text for path, text in site_pages(site) if path.endswith(".md")]
    for path in sorted(DOCS.rglob("*.md")):
        pages.append(expand_shortcodes(path.read_text(encoding="utf-8"), site, path.relative_to(DOCS).as_posix()))
    tables: list[list[str]] = []
    real = R._table  # as prerender calls it

    def spy(lines: Sequence[str], resolve: Resolve) -> str:
        tables.append(list(lines))
        return real(lines, resolve)

    R._table = spy
    try:
        for text in pages:
            prerender(text, lambda url: url)
    finally:
        R._table = real
    return tables


def test_every_table_of_the_site_renders_as_the_reference_renders_it(site_tables: list[list[str]]) -> None:
    rendered = 0
    for lines in site_tables:
        ref, fast = _both(lines)
        assert fast == ref, lines[:3]
        rendered += ref is not None
    # not vacuous: thousands of tables, links, code spans and escapes among them
    assert len(site_tables) > 2000 and rendered > 0.95 * len(site_tables)
    text = "\n".join("\n".join(t) for t in site_tables)
    assert "](" in text and "`" in text and "\\-" in text


CELL_PIECES = [
    "a", "1,234", " ", "\\-", "\\|", "\\\\", "\\.", "\\x", "`", "``", "`c|d`", "|", "[x](p.md)", "[", "]", "(", ")",
    "**b**", "*e*", "_", "max_tokens", "<span class=\"x\">", "</span>", "<b>", "&amp;", "&#61;", "&", ">", "<", "!",
    "{", "}", "×", "–",
]  # fmt: skip
rows = st.lists(st.lists(st.sampled_from(CELL_PIECES) | st.text(max_size=3), max_size=6).map("".join), max_size=5)


@settings(max_examples=2000, deadline=None)
@given(st.integers(1, 4), st.lists(rows, min_size=1, max_size=4), st.sampled_from(["---", ":---", "---:", ":-:"]))
def test_generated_rows_render_as_the_reference_renders_them(width: int, body: list[list[str]], align: str) -> None:
    def row(cells: list[str]) -> str:
        return "| " + " | ".join((cells + ["x"] * width)[:width]) + " |"

    lines = [row([f"h{i}" for i in range(width)]), "| " + " | ".join([align] * width) + " |"]
    lines += [row(cells) for cells in body]
    lines += [re.sub(r"^\| ", "|", lines[-1])]  # rows need not pad their pipes
    ref, fast = _both(lines)
    assert fast == ref
    for line in lines:
        try:
            expected: list[str] | None = _ref_split_row(line)
        except P._Unsupported:
            expected = None
        try:
            got: list[str] | None = P._split_row(line)
        except P._Unsupported:
            got = None
        assert got == expected, line
