"""The built site must load nothing from outside: every ``src``/``href`` (and CSS ``url()``/``@import``)
in its HTML, CSS and SVG files must point inside the site, unless it starts with an allow-listed prefix.

Pure checking over text (:func:`check_html`, :func:`check_css`) plus a folder walk (:func:`check_site`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["DEFAULT_ALLOW", "Violation", "check_css", "check_html", "check_site", "is_external"]

# Nothing is allowed by default; mkdocs.yml's extra.benchbook.offline_allow adds prefixes.
DEFAULT_ALLOW: tuple[str, ...] = ()

URL_ATTRS = frozenset({"src", "href", "srcset", "poster", "action", "formaction", "data", "xlink:href", "background"})
_CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(['"])(.*?)\1""", re.IGNORECASE)
_LOCAL_SCHEMES = frozenset({"", "data", "blob", "about", "mailto", "javascript", "tel"})


@dataclass(frozen=True)
class Violation:
    file: str
    where: str  # e.g. "<script src>" or "url()"
    url: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where} loads an external resource: {self.url}"


def is_external(url: str, allow: Sequence[str] = DEFAULT_ALLOW) -> bool:
    """True for anything fetched from another host (http(s), ws, ftp, protocol-relative //host ...)."""
    u = url.strip()
    if not u or any(u.startswith(a) for a in allow):
        return False
    if u.startswith("//") or u.startswith("\\\\"):
        return True
    parts = urlsplit(u)
    return parts.scheme.lower() not in _LOCAL_SCHEMES or bool(parts.netloc)


def check_css(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    out = [Violation(file, "url()", m.group(2)) for m in _CSS_URL.finditer(text) if is_external(m.group(2), allow)]
    out += [
        Violation(file, "@import", m.group(2)) for m in _CSS_IMPORT.finditer(text) if is_external(m.group(2), allow)
    ]
    return out


class _Collector(HTMLParser):
    def __init__(self, file: str, allow: Sequence[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.file, self.allow = file, allow
        self.found: list[Violation] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        for name, value in attrs:
            if value is None:
                continue
            if name == "style":
                self.found += check_css(value, self.file, self.allow)
            elif name in URL_ATTRS:
                urls = [c.strip().split(" ")[0] for c in value.split(",")] if name == "srcset" else [value]
                self.found += [Violation(self.file, f"<{tag} {name}>", u) for u in urls if is_external(u, self.allow)]

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found += check_css(data, self.file, self.allow)


def check_html(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    parser = _Collector(file, allow)
    parser.feed(text)
    parser.close()
    return parser.found


def _files(site_dir: Path) -> Iterable[Path]:
    for path in sorted(site_dir.rglob("*")):
        if path.is_file() and path.suffix.lower() in (".html", ".htm", ".css", ".svg"):
            yield path


def check_site(site_dir: Path, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """Every external load in the built site's HTML, CSS and SVG files."""
    found: list[Violation] = []
    for path in _files(site_dir):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(site_dir).as_posix()
        found += check_css(text, rel, allow) if path.suffix.lower() == ".css" else check_html(text, rel, allow)
    return found
