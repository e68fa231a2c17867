"""The PR report's one GFM escaping function against a hostile corpus, rendered by GitHub's own Markdown parser
(cmark-gfm, through ``cmarkgfm``) with raw HTML let through, as strict as it gets: a record string must come out
as exactly its own text, with nothing GitHub's mention, issue-reference or emoji filters could pick up."""

from __future__ import annotations

import html
import re
import unicodedata

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gate._gfm import escape_gfm, shown

HOSTILE = [
    "![](https://tracker.example/pixel.png?pr=1)",
    "![alt][ref]\n\n[ref]: https://tracker.example/p.png",
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    "</details> <details open><summary>fake</summary>",
    "<!-- hidden comment",
    "@org/team please merge",
    "cc @octocat and user@example.com",
    "fixes #123 and org/repo#45 and GH-7",
    "`code` ``double`` and ```fence```",
    "```\nfenced block\n```",
    "a | b | c",
    "cell \\| escaped \\\\| double",
    "trailing backslash \\",
    "[link](javascript:alert(1)) [x]: http://ref",
    "<https://autolink.example> https://bare.example/x www.example.com",
    "*em* **strong** _u_ __uu__ ~~strike~~ ~x~",
    "# heading\n## another",
    "- list\n* item\n+ item\n1. ordered\n2) ordered",
    "> quote",
    "---",
    "===",
    "line one\nline two\r\nline three\u2028four",
    "  leading and trailing spaces  ",
    "tab\tseparated\x0bvertical",
    "&lt;img src=x&gt; &#64;org &#x23;1 &amp;",
    "$x^2$ and $$y$$ math",
    ":warning: :white_check_mark: the gate passes :octocat:",
    "[ ] task [x] done",
    "footnote[^1]\n\n[^1]: note",
    "\\<img src=x>",
    "nul\x00byte and bell\x07",
    "bidi \u202eevil\u202c override",
    "{curly} ^caret ~tilde %percent ?question ;semi 'quote' \"dq\" =eq +plus",
    "emoji 🚀 and ünïcödé",
]

OPTS = Options.CMARK_OPT_UNSAFE  # let raw HTML through: any HTML a string smuggles in would show


def render(md: str) -> str:
    return str(cmarkgfm.github_flavored_markdown_to_html(md, options=OPTS))


def visible(text: str) -> str:
    """What a reader must see: the text on one line, controls and bidi overrides gone, a zero-width space after
    every @, # and :, HTML-escaped as cmark writes text."""
    bidi = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
    kept = "".join(c for c in text if c.isspace() or (unicodedata.category(c) != "Cc" and c not in bidi))
    flat = re.sub(r"\s+", " ", kept).strip()
    flat = re.sub(r"([@#:])", "\\1\u200b", flat)
    return html.escape(flat, quote=False).replace('"', "&quot;")


def no_github_filters(rendered_text: str) -> None:
    assert not re.search(r"@[A-Za-z0-9]", rendered_text)  # mentions (and e-mail autolinks)
    assert not re.search(r"#[0-9A-Za-z]", rendered_text)  # issue references
    assert not re.search(r":[a-z0-9_+-]+:", rendered_text)  # emoji


@pytest.mark.parametrize("text", HOSTILE)
def test_paragraph_list_item_and_heading_show_exactly_the_text(text: str) -> None:
    esc = escape_gfm(text)
    want = visible(text)
    assert "\n" not in esc
    assert render(esc) == f"<p>{want}</p>\n"
    assert render(f"- {esc}") == f"<ul>\n<li>{want}</li>\n</ul>\n"
    assert render(f"### {esc}") == f"<h3>{want}</h3>\n"
    no_github_filters(html.unescape(want))


@pytest.mark.parametrize("text", HOSTILE)
def test_table_cell_stays_one_cell(text: str) -> None:
    esc = escape_gfm(text)
    out = render(f"| a | b | c |\n|---|---|---|\n| {esc} | mid | end |\n")
    body = out.split("<tbody>")[1]
    cells = re.findall(r"<td>(.*?)</td>", body, flags=re.S)
    assert cells == [visible(text), "mid", "end"]


@pytest.mark.parametrize("text", HOSTILE)
def test_fold_stays_closed_around_it(text: str) -> None:
    esc = escape_gfm(text)
    out = render(f"<details><summary>fold</summary>\n\n- {esc}\n\n{esc}\n\n</details>\n\nafter\n")
    assert out.count("<details>") == 1 and out.count("</details>") == 1
    assert out.count("<summary>") == 1 and out.count("</summary>") == 1
    assert out.index("</details>") < out.index("<p>after</p>")
    for tag in ("<img", "<script", "<a ", "<code", "<em", "<strong", "<del", "<h1", "<h2", "<ol", "<blockquote"):
        assert tag not in out, tag


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_any_text_round_trips_in_a_paragraph_and_a_cell(text: str) -> None:
    esc = escape_gfm(text)
    want = visible(text)
    para = render(esc)
    assert para == (f"<p>{want}</p>\n" if want else "")
    out = render(f"| a | b |\n|---|---|\n| {esc} | end |\n")
    cells = re.findall(r"<td>(.*?)</td>", out, flags=re.S)
    assert cells == [want, "end"]


def test_shown_redacts_before_escaping() -> None:
    assert shown("pulled with hf_AbCdEfGhIjKlMnOpQrStUv12 from https://ada:pw@hub.example/m") == (
        r"pulled with &lt;redacted&gt; from https\:&#8203;\/\/&lt;redacted&gt;\@&#8203;hub\.example\/m"
    )
    assert shown(None) == "—"
    assert shown({"api_key": "plain words"}) == escape_gfm('{"api_key": "<redacted>"}')
    assert shown("x" * 50, limit=10) == escape_gfm("x" * 10 + "… (40 more characters)")
