"""Pre-rendered tables, charts, lists and code blocks: the same HTML as Python-Markdown writes for them, on every page
the site has."""

from __future__ import annotations

import shutil

import pytest
from site_helpers import DOCS, FIXTURES, SHIPPED, every_page_markdown, site_markdown

from bench.site import load_site, prerender, restore


def _code(block: str) -> str:
    """A fenced code block converted on its own, as the hook does (hooks/site_hooks.py ``_CodeBlocks``)."""
    return site_markdown().convert(block)


def _both_ways(text: str) -> tuple[str, str, int]:
    plain = site_markdown().convert(text)
    resolved: list[str] = []
    pre = prerender(text, lambda url: resolved.append(url) or url, _code)
    fast = restore(site_markdown().convert(pre.markdown), pre.blocks)
    return plain, fast, len(pre.blocks)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """Every generated page (the records index split by experiment among them) and every hand-written page
    (shortcodes expanded) of the shipped and fixture records."""
    folder = tmp_path_factory.mktemp("records")
    shutil.copytree(SHIPPED, folder, dirs_exist_ok=True)
    shutil.copytree(FIXTURES, folder, dirs_exist_ok=True)
    return every_page_markdown(load_site(folder, DOCS))


def test_every_page_converts_to_the_same_html(pages: list[tuple[str, str]]) -> None:
    blocks = tables = lists = codes = 0
    for path, text in pages:
        plain, fast, n = _both_ways(text)
        assert fast == plain, path
        blocks += n
        tables += plain.count("<table>")
        kinds = [html[:24] for html in prerender(text, lambda url: url, _code).blocks.values()]
        lists += sum(k.startswith("<ul>") for k in kinds)
        codes += sum(k.startswith('<div class="highlight">') for k in kinds)
    # not vacuous: nearly every table and chart of the site was pre-rendered, and lists and code blocks were
    assert blocks >= 0.9 * tables and tables > 100 and lists > 20 and codes > 20


def test_generated_pages_keep_no_table_for_markdown(pages: list[tuple[str, str]]) -> None:
    for path, text in pages:
        if path.removeprefix("split:").startswith(("records/", "history/", "experiments/")):
            pre = prerender(text, lambda url: url)
            assert "\n| --- |" not in pre.markdown and '<figure class="bench-figure"' not in pre.markdown, path
            assert "<div" not in pre.markdown, path  # the tables' boxes went with them
            if "````" not in text:  # every code block but those around backtick fences (left to Markdown, still equal)
                assert "```" not in prerender(text, lambda url: url, _code).markdown, path


def test_links_in_tables_go_through_the_resolver() -> None:
    text = "# T\n\n| A | B |\n| --- | ---: |\n| [x](../a.md#f) | `c|d` \\| e |\n"
    pre = prerender(text, lambda url: url.replace(".md", ".html"))
    html = restore(site_markdown().convert(pre.markdown), pre.blocks)
    assert '<td><a href="../a.html#f">x</a></td>' in html
    assert '<td align="right"><code>c|d</code> | e</td>' in html


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


@pytest.mark.parametrize(
    "text",
    [
        "Notes:\n\n- C=1, `itl_ms`: over [the window](a.md#w), **16** requests\n- max\\_tokens &amp; more\n\n## Next\n",
        '# T\n\n```json\n{"a": [1, 2]}\n```\n\nText.\n',
        '??? note "Server info \\(payload\\)"\n\n    ```json\n    {\n      "a": 1\n    }\n    ```\n\n## After\n',
        '!!! info "Log"\n\n    Text.\n\n    ```bash\n    bench run x.yaml\n\n    echo `date`\n    ```\n',
        "````text\n```\ninner fence\n```\n````\n",  # a longer fence around backticks: left to Markdown, still equal
    ],
)
def test_lists_and_code_blocks_render_as_markdown_renders_them(text: str) -> None:
    plain, fast, n = _both_ways(text)
    assert fast == plain
    assert n >= (0 if text.startswith("````") else 1)


@pytest.mark.parametrize(
    "text",
    [
        "- a\n- b\n\n- c\n",  # lists a blank line apart: one loose list
        "- a\n- b\n\n    more of b\n",  # an indented paragraph joins the last item
        "1. one\n\n- a\n- b\n",  # another list just above
        "- - nested\n- b\n",  # an item Markdown reads as a block
        "- a\n- b\ntext\n",  # a lazy continuation
        "- a {: .x }\n",  # an attribute list
        "text\n- a\n",  # no blank line before
        '```python title="x.py"\nx = 1\n```\n',  # options on the fence
        "```\nx\n```\ntext\n",  # no blank line after
        "- a\n\n    ```\n    code in a list item\n    ```\n",  # indented, but not in an admonition
        "```\nx\n",  # never closed
    ],
)
def test_lists_and_code_it_does_not_render_are_left_to_markdown(text: str) -> None:
    pre = prerender(text, lambda url: url, _code)
    assert pre.blocks == {} or all(not k.startswith("BENCHBLOCK") for k in pre.blocks)
    assert "BENCHBLOCK" not in pre.markdown
    plain, fast, _ = _both_ways(text)
    assert fast == plain


def test_code_blocks_are_left_to_markdown_without_a_converter() -> None:
    text = "```json\n{}\n```\n"
    assert prerender(text, lambda url: url).blocks == {}


def test_a_record_cannot_forge_a_placeholder() -> None:
    """A record's text shaped like a placeholder stays text: it cannot know the nonce (a hash of its page)."""
    table = "| A |\n| --- |\n| 1 |\n"
    pre = prerender(table, lambda url: url)
    (key,) = pre.blocks
    for text in (f"{key}\n\n{table}", f"BENCHBLOCK0123456789abN0X\n\n{table}", f"- {key}\n\n{table}"):
        # the same key written by a record names a different page: the page's nonce changed with its text
        pre2 = prerender(text, lambda url: url, _code)
        assert key not in pre2.blocks
        html = restore(site_markdown().convert(pre2.markdown), pre2.blocks)
        assert html == site_markdown().convert(text)
        assert html.count("<table>") == 1


def test_a_doubled_placeholder_is_an_error() -> None:
    pre = prerender("| A |\n| --- |\n| 1 |\n", lambda url: url)
    (key,) = pre.blocks
    with pytest.raises(ValueError, match="twice"):
        restore(f"<p>{key}</p><p>{key}</p>", pre.blocks)


def test_scroll_boxes_download_lines_and_neighbouring_blocks_render_as_markdown_renders_them() -> None:
    table = "| A | B |\n| --- | ---: |\n| [x](a.md) | 2 |"
    text = (
        f'## T\n\n<div class="bench-scroll" markdown>\n\n{table}\n\n</div>\n\n'
        '<p class="bench-downloads" markdown>Download this: [CSV](a.csv) · [JSON](a.json)</p>\n\n'
        f"{table}\n\n- a\n- b\n\n```json\n{{}}\n```\n\nAfter.\n"
    )
    plain, fast, n = _both_ways(text)
    assert fast == plain
    assert n == 1  # five blocks in a row: one placeholder
    assert "bench-scroll" not in prerender(text, lambda url: url, _code).markdown


@pytest.mark.parametrize(
    "text",
    [
        '<div class="bench-scroll" markdown>\n\n| A |\n| --- |\n| 1 |\n\n</div>\ntext\n',  # no blank line after
        '<div class="bench-scroll" markdown>\n\n| A |\n| --- |\n| 1 |\n\nmore\n\n</div>\n',  # more than a table
        '<p class="bench-downloads" markdown>Get <b>it</b>: [CSV](a.csv)</p>\n',  # HTML inside
        '<p class="bench-downloads" markdown>Get: [CSV](a.csv)</p>\nmore\n',  # a paragraph goes on
    ],
)
def test_boxes_and_lines_it_does_not_render_are_left_to_markdown(text: str) -> None:
    plain, fast, _ = _both_ways(text)
    assert fast == plain
    assert "bench-" in prerender(text, lambda url: url, _code).markdown
