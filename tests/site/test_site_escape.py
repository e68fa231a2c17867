from __future__ import annotations

import markdown
import pytest

from bench.site import front_matter_title, html_text, md_code, md_code_block, md_text

EXTENSIONS = ["tables", "attr_list", "md_in_html", "admonition", "pymdownx.superfences"]
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "![img](http://evil.example/x.png)",
    "<http://evil.example>",
    "**bold** _it_ `code` | pipe # head",
    "{: onclick=alert(1) }",
    "!!! failure",
    "==",
    "&lt;script&gt; already escaped",
]


def render(md: str) -> str:
    return markdown.markdown(md, extensions=EXTENSIONS)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_never_yields_markup(text: str) -> None:
    cell = render("| a |\n|---|\n| " + md_text(text) + " |")
    para = render("Note: " + md_text(text))
    for html in (cell, para):
        assert "<script" not in html
        assert "<img" not in html
        assert "<a " not in html
        assert "<strong>" not in html and "<em>" not in html and "<code>" not in html
        assert "onclick" not in html or "onclick=alert" in html.replace("&#61;", "=")  # only as text
        assert "admonition" not in html


def test_md_text_round_trips_as_visible_text() -> None:
    html = render("x " + md_text("a_b *c* [d](e) <f> & | #"))
    assert "a_b *c* [d](e) &lt;f&gt; &amp; | #" in html


def test_md_text_is_one_line() -> None:
    assert "\n" not in md_text("a\n\n    b\n- c")


def test_code_block_cannot_be_closed_from_inside() -> None:
    body = "line\n```\n<script>alert(1)</script>\n````"
    html = render(md_code_block(body))
    assert html.count("<pre") == 1
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_code_span_holds_backticks() -> None:
    html = render("x " + md_code("a `b` <c>"))
    assert "<code>a `b` &lt;c&gt;</code>" in html


def test_html_text_escapes() -> None:
    assert html_text("<b>&") == "&lt;b&gt;&amp;"


def test_front_matter_title_has_no_markup_characters() -> None:
    fm = front_matter_title('</title><script>alert(1)</script> & "q"')
    assert fm.startswith("---\ntitle: ") and fm.endswith("---\n\n")
    assert "<" not in fm and ">" not in fm and "&" not in fm
