"""The built site must load nothing from outside: every ``src``/``href`` (and CSS ``url()``/``@import``)
in its HTML, CSS and SVG files must point inside the site, unless it starts with an allow-listed prefix.

Pure checking over text (:func:`check_html`, :func:`check_css`) plus a folder walk (:func:`check_site`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

from bench.atomic_write import write_atomic

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


def _check_html_fully(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """The reference check: the whole document through the HTML parser."""
    parser = _Collector(file, allow)
    parser.feed(text)
    parser.close()
    return parser.found


# The fast path. A page is mostly text, table cells and SVG shapes, which load nothing: only a tag with a URL
# attribute, a style attribute holding url(), @import or a character reference, and a <style> element can. The
# lower-cased text is searched for those (one regex over the page); each hit's tag (or style element) goes through
# the parser above, in document order; comments and a script's text are skipped, as the parser skips them. A hit
# that lies in no tag the fast path can delimit (broken markup, text that looks like a tag) sends the whole page
# through the parser.
_ATTRS = r"""[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*"""  # a tag's attributes: quoted values may hold '>'
_TAG = re.compile(rf"<[a-zA-Z]{_ATTRS}>")
_LOADS = r"(?:&|url\s*\(|@import)"
# Over the lower-cased text, one literal-led pattern each (an alternation, or IGNORECASE, is many times slower).
_URL_NAMES = ("srcset", "src", "href", "poster", "action", "data", "background")
_SUSPECTS = (
    *(re.compile(rf"{name}\s*=") for name in _URL_NAMES),
    re.compile(rf"style\s*=\s*(?:\"[^\"]*?{_LOADS}|'[^']*?{_LOADS}|[^\s>\"']*?{_LOADS})"),
)
_SPECIAL = re.compile(r"<!--|<script\b|<style\b")


def check_html(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """Every external load in one HTML or SVG document: what parsing all of it finds, at a fraction of the cost."""
    lower = text.lower()
    pieces = _pieces(text, lower) if len(lower) == len(text) else None
    if pieces is None:
        return _check_html_fully(text, file, allow)
    return _check_html_fully("".join(piece for _, piece in sorted(pieces.items())), file, allow)


def _pieces(text: str, lower: str) -> dict[int, str] | None:
    """Start → markup of each piece that may load something; None when a hit lies outside any tag."""
    pieces: dict[int, str] = {}
    skipped: list[tuple[int, int]] = []  # comments, a script's text, style elements (taken whole)
    pos = 0
    while (m := _SPECIAL.search(lower, pos)) is not None:
        if m.group(0) == "<!--":
            end = lower.find("-->", m.end())
            pos = len(text) if end < 0 else end + 3
            skipped.append((m.start(), pos))
            continue
        tag = _TAG.match(text, m.start())
        if tag is None:
            return None
        name = m.group(0)[1:]
        end = lower.find(f"</{name}", tag.end())
        pos = len(text) if end < 0 else end
        if name == "style":
            pieces[m.start()] = text[m.start() : pos] + "</style>"
            skipped.append((m.start(), pos))
        else:
            skipped.append((tag.end(), pos))
    i = 0
    for at in sorted({m.start() for pattern in _SUSPECTS for m in pattern.finditer(lower)}):
        while i < len(skipped) and skipped[i][1] <= at:
            i += 1
        if i < len(skipped) and skipped[i][0] <= at:
            continue
        start = text.find("<", text.rfind(">", 0, at) + 1, at)
        tag = _TAG.match(text, start) if start >= 0 else None
        if tag is None or tag.end() <= at:
            return None
        if start not in pieces:
            closing = "</script>" if lower.startswith("<script", start) else ""
            pieces[start] = tag.group(0) + closing
    return pieces


def _files(site_dir: Path) -> Iterable[Path]:
    for path in sorted(site_dir.rglob("*")):
        if path.is_file() and path.suffix.lower() in (".html", ".htm", ".css", ".svg"):
            yield path


def check_site(
    site_dir: Path,
    allow: Sequence[str] = DEFAULT_ALLOW,
    *,
    cache_dir: Path | None = None,
    known: Mapping[str, tuple[str, int, int]] | None = None,
) -> list[Violation]:
    """Every external load in the built site's HTML, CSS and SVG files.

    Every file of every build is checked; with ``cache_dir`` (the site cache folder; None: off), a file whose exact
    bytes an earlier build found clean, with this check code and this allow list, is not parsed again: the sha256
    digests of the clean files are kept in ``cache_dir/offline/<key>.txt``, ``key`` a hash of this module's source
    and of ``allow``, rewritten atomically after each build with the files found clean in it. A file that loads
    something from outside is never kept, so it fails every build. ``known``: files whose bytes' sha256 the caller
    knows (``bench.site.Outputs.placed``: a site file linked to a kept file named by it), with the size and
    modification time they had then; such a file, unchanged since by both, is not read to be hashed."""
    store = _clean_store(cache_dir, allow)
    clean_before = _read_digests(store)
    known_files = known or {}
    found: list[Violation] = []
    clean: set[str] = set()
    for path in _files(site_dir):
        css = path.suffix.lower() == ".css"
        kind = "css:" if css else "html:"
        told = known_files.get(str(path))
        if told is not None and _unchanged(path, told) and kind + told[0] in clean_before:
            clean.add(kind + told[0])
            continue
        data = path.read_bytes()
        digest = kind + hashlib.sha256(data).hexdigest()
        if digest in clean_before:
            clean.add(digest)
            continue
        # as Path.read_text reads it: undecodable bytes replaced, universal newlines
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        rel = path.relative_to(site_dir).as_posix()
        violations = check_css(text, rel, allow) if css else check_html(text, rel, allow)
        found += violations
        if not violations:
            clean.add(digest)
    if store is not None and clean != clean_before:
        with contextlib.suppress(OSError):  # a read-only or full disk costs speed, never the check
            write_atomic(store, "".join(f"{d}\n" for d in sorted(clean)), durable=False)
    return found


_CHECK_CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()  # the check's own code


def _clean_store(cache_dir: Path | None, allow: Sequence[str]) -> Path | None:
    if cache_dir is None:
        return None
    key = hashlib.sha256("\0".join((_CHECK_CODE, *allow)).encode()).hexdigest()
    return cache_dir / "offline" / f"{key[:32]}.txt"


def _read_digests(store: Path | None) -> frozenset[str]:
    if store is None:
        return frozenset()
    try:
        lines = store.read_text(encoding="ascii").split("\n")
    except (OSError, ValueError):
        return frozenset()
    return frozenset(line for line in lines if _DIGEST.fullmatch(line))


_DIGEST = re.compile(r"(?:css|html):[0-9a-f]{64}")


def _unchanged(path: Path, told: tuple[str, int, int]) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return (st.st_size, st.st_mtime_ns) == told[1:]
