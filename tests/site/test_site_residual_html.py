"""What is left of a page's Markdown once its heavy blocks are pre-rendered, written as HTML without Python-Markdown
(``bench.site.residual_html``): the same HTML, table of contents, title and anchors as Python-Markdown (with
``mkdocs.yml``'s extensions) and MkDocs make of it, on every page of the site and on generated documents; anything
it does not write exactly, it refuses (None)."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from site_helpers import DOCS, FIXTURES, SHIPPED, every_page_markdown, site_markdown

from bench.site import load_site, prerender, residual_html

_ID = re.compile(r' id="([^"]*)"')
_TAG = re.compile(r"<[^>]*>")


def _resolve(url: str) -> str:
    return url.replace(".md", ".html")


def _code(block: str) -> str:
    return site_markdown().convert(block)


def _markdown_way(text: str) -> tuple[str, list[dict[str, Any]], str | None, frozenset[str]]:
    """Python-Markdown's HTML and toc tokens, the title MkDocs takes (the first element when it is a top-level
    heading: its text without the permanent link) and the ids of the elements (MkDocs' anchors)."""
    md = site_markdown()
    out = md.convert(text)
    title = None
    m = re.match(r"<h1 [^>]*>(.*?)<a class=\"headerlink\"[^>]*>&para;</a></h1>", out)
    if m is not None:
        title = " ".join(_TAG.sub("", m.group(1)).split())
    # links are resolved by MkDocs after conversion: here, as residual_html resolves them
    out = re.sub(r'href="([^"#][^"]*)"', lambda x: f'href="{_resolve(x.group(1))}"', out)
    return out, md.toc_tokens, title, frozenset(_ID.findall(out))


def _agrees(text: str) -> bool:
    """residual_html refuses ``text`` or writes exactly what Markdown writes; True when it wrote it."""
    made = residual_html(text, _resolve)
    if made is None:
        return False
    html_text, toc, title, anchors = _markdown_way(text)
    assert made.html == html_text
    assert made.toc == toc
    assert made.title == title
    assert made.anchors == anchors
    return True


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """Every generated page (record pages and the records index split by experiment among them) and every
    hand-written page of the shipped and fixture records (the hostile record among them), pre-rendered as the hook
    does."""
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    texts = every_page_markdown(load_site(folder, DOCS))
    return [(path, prerender(body, _resolve, _code).markdown) for path, body in texts]


def test_every_page_it_writes_is_what_markdown_writes(pages: list[tuple[str, str]]) -> None:
    written = {path for path, text in pages if _agrees(text)}
    shipped = {f"records/{p.relative_to(SHIPPED).with_suffix('.md').as_posix()}" for p in SHIPPED.rglob("*.json")}
    # not vacuous: every shipped record's page is written without Markdown (the fixtures' hostile record, a list
    # left in its Markdown or a paragraph of two lines are refused: Markdown converts those pages)
    assert len(shipped) > 25 and shipped <= written, sorted(shipped - written)
    # and so is every experiment's list of records once the records index is split by experiment
    lists = {path for path, _ in pages if path.startswith("split:records/") and path.count("/") == 2}
    assert len(lists) > 5 and lists <= written, sorted(lists - written)


_TEXT = st.sampled_from(
    [
        "Summary",
        "Summary",  # twice: the second heading gets summary_1
        "summary_1",
        "H200, llama\\.cpp \\(run 1\\)",
        "Levels `C=8` and *n*",
        "**Status:** complete — 8 level\\(s\\)",
        "[previous](other.md) record",
        "[anchor](other.md#levels) and [here](#summary)",
        "Ünïcode naïve café",
        "a &amp; b &lt; c",
        "x > y",
        "max_tokens and snake_case",
        "!!!",
        "100%",
        "---",
        "1. first",
        "- item",
        "* item",
        "> quote",
        "#",
        "a #",
        "trailing  ",
        " leading",
        "{: .cls}",
        "<b>bold</b>",
        "[ref]: http://example.com",
        "`unclosed",
        "_emphasis_",
        "BENCHBLOCK0123456789abN0X",
    ]
)


@st.composite
def _line(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["heading", "paragraph", "admonition", "blank", "indented", "underline"]))
    text = draw(_TEXT)
    if kind == "heading":
        return "#" * draw(st.integers(1, 7)) + draw(st.sampled_from([" ", "  ", ""])) + text
    if kind == "admonition":
        marker = draw(st.sampled_from(["!!!", "???", "???+", "!!! "]))
        kind_name = draw(st.sampled_from(["note", "info", "warning", "Note"]))
        title = draw(st.sampled_from(['"' + text + '"', '""', "", '"a" b']))
        body = draw(st.lists(_TEXT, min_size=0, max_size=3))
        gap = draw(st.sampled_from(["\n", "\n\n"]))
        return f"{marker} {kind_name} {title}".rstrip() + gap + "\n\n".join("    " + b for b in body)
    if kind == "blank":
        return ""
    if kind == "indented":
        return draw(st.sampled_from(["    ", "  ", "        "])) + text
    if kind == "underline":
        return draw(st.sampled_from(["===", "---", "***"]))
    return text


@settings(max_examples=400, deadline=None)
@given(st.lists(_line(), min_size=1, max_size=8), st.sampled_from(["\n", "\n\n"]))
@example(["# Title", "## Summary", "## Summary", "### Deeper", "# Again", "## Back"], "\n\n")
@example(["### Three", "# One", "## Two", "###### Six", "## Two again"], "\n\n")
@example(['!!! info "Provenance: measured"\n\n    **Measured** by benchbook', "After"], "\n\n")
@example(['???+ note "Server info (the engine\'s own payload)"\n    BENCHBLOCK0123456789abN1X'], "\n\n")
@example(["Paragraph", "==="], "\n")
@example(['??? note "#"\n    Summary'], "\n")
@example(["# Title", "Text right under it"], "\n")
def test_generated_documents_are_written_as_markdown_writes_them_or_refused(lines: list[str], sep: str) -> None:
    _agrees(sep.join(lines))


def test_what_it_refuses() -> None:
    for text in [
        "- a list\n",
        "Two lines\nof one paragraph\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "<div>raw</div>\n",
        "Text {: .cls}\n",
        '# Heading\n\n!!! note "Title"\n    # a heading inside\n',
        "    indented code\n",
        "```\ncode\n```\n",
        "tab\there\n",
        "Title\n=====\n",
        '??? note "# x"\n    Body\n',  # a collapsible block's summary is read as blocks: a heading here
        "# A [link](a.md)\n",  # the toc keeps a heading's link unresolved
        "",
    ]:
        assert residual_html(text, _resolve) is None, text


def test_links_go_through_resolve() -> None:
    asked: list[str] = []
    made = residual_html("See [the record](a/b.md#levels).\n", lambda url: asked.append(url) or url.upper())
    assert made is not None and asked == ["a/b.md#levels"]
    assert made.html == '<p>See <a href="A/B.MD#LEVELS">the record</a>.</p>'


@pytest.mark.parametrize(
    "text",
    [
        "# Title\n\n## Summary\n\n## Summary\n\n### Deeper\n\n# Again\n\n## Back\n",  # ids summary, summary_1
        "### Three\n\n# One\n\n## Two\n\n###### Six\n\n## Two again\n",  # levels out of order, as toc nests them
        '!!! info "Provenance: measured"\n\n    **Measured** by benchbook 0\\.1\\.0\n\n    Second `paragraph`\n',
        '???+ note "Server info (the engine\'s own payload)"\n    BENCHBLOCK0123456789abN1X\n\nAfter it\n',
        "# H200, llama\\.cpp \\(run 1\\)\n\nSee [the record](a/b.md#levels) and *n* > 3 &amp; 4.\n",
        "# Ünïcode naïve café\n\n## 100%\n\n## ---x\n",
    ],
)
def test_the_shapes_of_a_record_page_are_written(text: str) -> None:
    assert _agrees(text)
