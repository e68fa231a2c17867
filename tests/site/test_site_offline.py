from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from site_helpers import run_command as main

import bench.site._offline as offline
from bench.site import check_css, check_html, check_site, is_external
from bench.site._offline import _check_html_fully


@pytest.mark.parametrize(
    "url",
    ["https://cdn.example/x.js", "http://x", "//cdn.example/x.js", "HTTPS://X", "ftp://x/y", "wss://x"],
)
def test_external(url: str) -> None:
    assert is_external(url)


@pytest.mark.parametrize(
    "url", ["assets/x.js", "../x.html#a", "/abs/x.css", "#top", "data:image/png;base64,AA", "mailto:a@b", ""]
)
def test_local(url: str) -> None:
    assert not is_external(url)


def test_html_attributes_and_styles() -> None:
    html = """<html><head>
    <script src="https://cdn.example/mermaid.js"></script>
    <link rel="stylesheet" href="https://fonts.example/css">
    <style>@import "https://fonts.example/a.css"; body { background: url(//img.example/b.png) }</style>
    </head><body><img srcset="a.png 1x, https://img.example/c.png 2x">
    <div style="background-image: url('http://img.example/d.png')"></div>
    <a href="local.html">ok</a><img src="data:image/gif;base64,R0lGOD">
    <svg><image xlink:href="https://img.example/e.svg"/></svg></body></html>"""
    found = check_html(html, "page.html")
    urls = sorted(v.url for v in found)
    assert urls == sorted(
        [
            "https://cdn.example/mermaid.js",
            "https://fonts.example/css",
            "https://fonts.example/a.css",
            "//img.example/b.png",
            "https://img.example/c.png",
            "http://img.example/d.png",
            "https://img.example/e.svg",
        ]
    )
    assert str(found[0]).startswith("page.html: <script src> loads an external resource: https://cdn.example")


def test_allow_list() -> None:
    html = '<a href="https://allowed.example/page">x</a><script src="https://cdn.example/x.js"></script>'
    found = check_html(html, "p.html", allow=("https://allowed.example/",))
    assert [v.url for v in found] == ["https://cdn.example/x.js"]


def test_css_file() -> None:
    assert [v.where for v in check_css('@import url("https://x/y.css"); a{b:url(z.png)}', "a.css")] == ["url()"]


def _site(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text('<script src="assets/app.js"></script><a href="page.html">p</a>')
    (tmp_path / "assets" / "app.css").write_text("a { background: url(../img.png) }")
    return tmp_path


def test_clean_site_passes_and_planted_script_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = _site(tmp_path)
    assert check_site(site) == []
    assert main(["check-offline", str(site)]) == 0
    (site / "page.html").write_text('<p>hi</p><script src="https://cdn.example/evil.js"></script>')
    found = check_site(site)
    assert [(v.file, v.url) for v in found] == [("page.html", "https://cdn.example/evil.js")]
    assert main(["check-offline", str(site)]) == 1
    err = capsys.readouterr().err
    assert "page.html: <script src> loads an external resource: https://cdn.example/evil.js" in err
    assert main(["check-offline", str(site), "--allow", "https://cdn.example/"]) == 0


def test_missing_site_dir(tmp_path: Path) -> None:
    assert main(["check-offline", str(tmp_path / "nope")]) == 2


def test_the_command_checks_in_the_build_workers_and_refuses_a_bad_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(tmp_path)
    for i in range(250):  # enough files for two processes (bench.site._offline_pool.MIN_FILES_PER_WORKER)
        (site / f"p{i}.html").write_text(f'<a href="p{i + 1}.html">next</a>')
    (site / "p201.html").write_text('<img src="https://cdn.example/x.png">')  # planted
    monkeypatch.setenv("BENCHBOOK_BUILD_WORKERS", "2")
    assert main(["check-offline", str(site)]) == 1
    assert "p201.html: <img src> loads an external resource: https://cdn.example/x.png" in capsys.readouterr().err
    monkeypatch.setenv("BENCHBOOK_BUILD_WORKERS", "none")
    assert main(["check-offline", str(site)]) == 2
    assert "BENCHBOOK_BUILD_WORKERS: expected a whole number of processes" in capsys.readouterr().err


TRICKY = [
    '<SCRIPT src="http://x"></SCRIPT><Style>a{b:url(http://y)}</STYLE><p>&amp;</p><img SRC=&#104;ttp://z>',
    '<p>text href="http://q"</p>',
    '<a title="x>y" href="//h">',
    '<!-- <img src="http://c"> --><img src=x>',
    '<styles href="http://s">',
    '<a href="http://x"',
    '<svg><image xlink:href="https://e"/></svg>',
    '<img srcset="a 1x, http://b 2x">',
    '<div style="background:url(//x)">',
    '<div style="background:&#117;rl(//x)">',
    '<a title="a<b" href="http://t">',
    '<script>var a="<img src=http://no>"</script><img src="http://yes">',
    '<object data="http://o"></object><form action="https://f"><video poster="//p"><body background="http://b">',
    "<td style='text-align: right'>1</td><td style=\"color: red\">2</td>",
    '<p>İ<a href="http://after-a-letter-whose-lower-case-is-longer">x</a></p>',
    # what the fast path's one-regex reading of a simple tag must leave to the parser
    '<a href="http://a?b&amp;c">',  # a character reference in a value
    '<a href="&#104;ttp://ent">',
    "<img src='http://single-quoted'>",
    "<img src=http://unquoted>",
    '<A HREF="http://UPPER" Title="t">',
    '<svg><use xlink:href="https://e#x"/></svg>',
    '<a\nhref="http://newline"\n>',
    '<a href="http://x" / ><img src="//y"/>',
    '<a href="https://not-closed">x</a',
    '<script src="http://s"></script><img src="http://after-a-script">',
    '<scriptx src="http://z"></scriptx>',
    # plainly local values are no hits; anything else is
    '<a href="../a/b.html#c"><a href="/x//evil"><a href="http:evil"><a href="\\\\host\\x"><a href="/\t/tab">',
    '<img srcset="a.png 1x,//cdn/b.png 2x">',
    # the parser's rules that the fast path once got wrong (each missed a load)
    '<script-x><img src="http://name-goes-on"></script-x>',  # not a script: its name is "script-x"
    '<script>x</ script><img src="http://end-tag-with-space"><script></script>',
    '<!-- x -- ><img src="http://comment-end-with-space"> -->',
    '<!-- unclosed > <img src="http://after-an-unclosed-comment">',
    '<div style=="background:url(http://double-equals)">',
    '<div style=a"url(http://quote-inside-a-bare-value)">',
    '<a title="<script>" href="http://script-in-a-value"></a><script></script>',
    '<a title="<!--" href="http://comment-in-a-value">--></a>',
    "<div style=\"@\u0131mport 'http://dotless-i'\">",  # re.IGNORECASE: 'i' matches it
    '<body bac\u212aground="http://kelvin-sign">',  # its lower case is 'k'
    '<a href\u2003="http://unicode-space">',
    '<p>\xe9\u2014<img src="http://after-non-ascii-text">\U0001f600<img src="//after-an-emoji"></p>',
]


@pytest.mark.parametrize("html", TRICKY)
def test_fast_check_finds_what_parsing_everything_finds(html: str) -> None:
    assert check_html(html, "p.html") == _check_html_fully(html, "p.html")
    assert check_html(html.upper(), "p.html") == _check_html_fully(html.upper(), "p.html")


def test_every_white_space_the_parser_knows_is_spelled_out() -> None:
    """The fast path's patterns list the characters the parser's ``\\s`` matches (all below U+3001)."""
    import re
    import sys

    from bench.site._offline_scan import _WHITE_SPACE

    every = [chr(c).encode() for c in range(sys.maxunicode + 1) if re.match(r"\s", chr(c))]
    assert every == _WHITE_SPACE


def test_external_loads_in_a_large_page_are_caught() -> None:
    """A page as big as a generated record page: thousands of table cells and SVG shapes (which the fast check
    skips), with external loads planted among them."""
    rows = "\n".join(
        f'<tr><td>C={i}</td><td style="text-align: right;">{i * 1.5}</td><td><a href="../x/{i}.html">r</a></td></tr>'
        for i in range(3000)
    )
    shapes = "".join(f'<circle cx="{i}" cy="{i}" r="2"/><text x="{i}">{i}</text>' for i in range(3000))
    planted = [
        '<img src="https://cdn.example/a.png">',
        '<span style="background: &#117;rl(//cdn.example/b.png)">b</span>',
        '<svg><use xlink:href="https://cdn.example/c.svg#x"/></svg>',
    ]
    page = (
        f'<html><head><script>var s = "<img src=https://not-loaded.example>";</script></head><body><table>{rows}'
        f'</table>{planted[0]}<svg xmlns="http://www.w3.org/2000/svg">{shapes}</svg>{planted[1]}<!-- '
        f'<img src="https://commented-out.example"> -->{planted[2]}</body></html>'
    )
    found = check_html(page, "big.html")
    assert [v.url for v in found] == ["https://cdn.example/a.png", "//cdn.example/b.png", "https://cdn.example/c.svg#x"]


# Pieces a style attribute's value is made of: what can start a load ('&', 'u', '@'), what ends a value, white space
# (one byte, several bytes) and plain letters.
_STYLE_PIECES = [
    "style", "=", '"', "'", " ", "\t", "\n", ">", "<", "u", "url", "url(", "url (", "ur", "uu", "@", "@import",
    "@\u0130mport", "@\u0131mport", "@@", "&", "&amp;", "a", "(", "\x85", "\u3000", "\x0b", "\x1c", "background:",
]  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_STYLE_PIECES), max_size=40).map("".join))
def test_a_style_value_is_a_suspect_where_a_lazy_reading_finds_a_load(text: str) -> None:
    """The style suspect skips the bytes that cannot start a load in one run; it must match exactly where the plain
    reading (any value bytes, as few as may be, then a load) matches, and as far."""
    import re

    from bench.site._offline_scan import _LOADS, _SUSPECTS, _WS_BYTES

    lazy = rb"""(?:"[^"]*?""" + _LOADS + rb"""|'[^']*?""" + _LOADS + rb"""|(?!["'])[^>\s]*?""" + _LOADS + rb")"
    plain = re.compile(rb"style" + _WS_BYTES + rb"*=+" + _WS_BYTES + rb"*" + lazy)
    data = text.encode()
    assert [m.span() for m in _SUSPECTS[-1].finditer(data)] == [m.span() for m in plain.finditer(data)]
    assert check_html(f"<p {text}", "p.html") == _check_html_fully(f"<p {text}", "p.html")


def test_the_walk_finds_what_rglob_finds_in_its_order(tmp_path: Path) -> None:
    """Every HTML, CSS and SVG file (any case of the suffix, a link to a file, hidden ones), not what a linked folder
    holds, in the order of ``sorted(Path.rglob("*"))`` (part by part: ``a/b.html`` before ``a-b/x.html``); and a page
    in a linked folder is not checked twice."""
    site = tmp_path / "site"
    for rel in ("a/b.html", "a-b/x.html", "a.html", "Z.HTML", "assets/s.css", "img/i.svg", ".hidden/h.htm", "d.json"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        planted = '<html><body><script src="https://cdn.example/x.js"></script></body></html>'
        (site / rel).write_text(planted if rel == "a/b.html" else "<p>in</p>", encoding="utf-8")
    (site / "linked.html").symlink_to(site / "a.html")
    (site / "folder-link").symlink_to(site / "a", target_is_directory=True)
    expected = [
        p.relative_to(site).as_posix()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.suffix.lower() in (".html", ".htm", ".css", ".svg")
    ]
    assert [rel for rel, _ in offline._files(site)] == expected
    assert expected.index("a/b.html") < expected.index("a-b/x.html") and "folder-link/b.html" not in expected
    assert [v.file for v in check_site(site)] == ["a/b.html"]
