"""Pre-rendered tables and charts: the same HTML as Python-Markdown writes for them, on every page the site has."""

from __future__ import annotations

import shutil

import pytest
from site_helpers import DOCS, FIXTURES, SHIPPED, site_markdown

from bench.site import expand_shortcodes, load_site, prerender, restore, site_pages


def _body(text: str) -> str:
    return text[text.index("\n---\n", 4) + 5 :] if text.startswith("---\n") else text


def _both_ways(text: str) -> tuple[str, str, int]:
    plain = site_markdown().convert(text)
    resolved: list[str] = []
    pre = prerender(text, lambda url: resolved.append(url) or url)
    fast = restore(site_markdown().convert(pre.markdown), pre.blocks)
    return plain, fast, len(pre.blocks)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """Every generated page and every hand-written page (shortcodes expanded) of the shipped and fixture records."""
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    site = load_site(folder, DOCS)
    out = [(path, _body(text)) for path, text in site_pages(site) if path.endswith(".md")]
    for path in sorted(DOCS.rglob("*.md")):
        src = path.relative_to(DOCS).as_posix()
        out.append((src, _body(expand_shortcodes(path.read_text(encoding="utf-8"), site, src))))
    return out


def test_every_page_converts_to_the_same_html(pages: list[tuple[str, str]]) -> None:
    blocks = tables = 0
    for path, text in pages:
        plain, fast, n = _both_ways(text)
        assert fast == plain, path
        blocks += n
        tables += plain.count("<table>")
    # not vacuous: nearly every table and chart of the site was pre-rendered
    assert blocks >= 0.9 * tables and tables > 100


def test_generated_pages_keep_no_table_for_markdown(pages: list[tuple[str, str]]) -> None:
    for path, text in pages:
        if path.startswith(("records/", "history/", "experiments/")):
            pre = prerender(text, lambda url: url)
            assert "\n| --- |" not in pre.markdown and '<figure class="bench-figure"' not in pre.markdown, path


def test_links_in_tables_go_through_the_resolver() -> None:
    text = "# T\n\n| A | B |\n| --- | ---: |\n| [x](../a.md#f) | `c|d` \\| e |\n"
    pre = prerender(text, lambda url: url.replace(".md", ".html"))
    html = restore(site_markdown().convert(pre.markdown), pre.blocks)
    assert '<td><a href="../a.html#f">x</a></td>' in html
    assert '<td style="text-align: right;"><code>c|d</code> | e</td>' in html


@pytest.mark.parametrize(
    "text",
    [
        "```\n| A | B |\n| --- | --- |\n| 1 | 2 |\n```\n",  # a table shown as code stays code
        "| A | B |\n| --- | --- |\n| ![img](x.png) | 2 |\n",  # an image: left to Markdown
        "| A | B |\n| --- | --- |\n| _em_ | {: .x } |\n",  # emphasis by underscores, attribute lists
        "text\n| A | B |\n| --- | --- |\n| 1 | 2 |\n",  # no blank line before: not a block of its own
    ],
)
def test_what_it_does_not_render_is_left_to_markdown(text: str) -> None:
    pre = prerender(text, lambda url: url)
    assert pre.blocks == {} and pre.markdown == text


def test_a_lost_placeholder_is_an_error() -> None:
    pre = prerender("| A |\n| --- |\n| 1 |\n", lambda url: url)
    with pytest.raises(ValueError, match="not found"):
        restore("<p>nothing here</p>", pre.blocks)
