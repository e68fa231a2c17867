from __future__ import annotations

from pathlib import Path

import pytest
from site_helpers import run_command as main

from bench.site import check_css, check_html, check_site, is_external


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
