"""The offline check over one document: what in it loads something from outside (stdlib only, so that a worker
process of :mod:`bench.site._offline_pool` loads this one file and nothing else of benchbook).

:func:`_check_html_fully` is the reference: the whole document through :class:`html.parser.HTMLParser`.
:func:`check_html_bytes` finds the same loads at a fraction of the cost (see the comment above it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from collections.abc import Container, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_ALLOW: tuple[str, ...] = ()  # nothing is allowed by default; mkdocs.yml's extra.benchbook.offline_allow adds

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
    return _is_external(url, tuple(allow))


@functools.lru_cache(maxsize=1 << 16)  # a site repeats its URLs (../assets/..., links between pages)
def _is_external(url: str, allow: tuple[str, ...]) -> bool:
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
        self.file, self.allow = file, tuple(allow)
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

    def feed_piece(self, markup: bytes, closing: bytes) -> None:
        """One start tag (or style element), then ``closing``: a start tag the parser reads in one obvious way is
        read by one regex and handled as the parser would (its end tag does nothing), anything else is parsed."""
        text = decode(markup)
        simple = None if self.rawdata or self.cdata_elem else _SIMPLE_TAG.fullmatch(text)
        if simple is None:
            self.feed(text + closing.decode("ascii"))
        else:
            attrs = [(n.lower(), v) for n, v in _SIMPLE_ATTR.findall(simple.group(2))]
            self.handle_starttag(simple.group(1).lower(), attrs)


# A start tag the parser reads in one obvious way: a name, then attributes with double-quoted values holding no
# character reference (so the parser's unescaping leaves them as they are), then '>' or '/>'.
_SIMPLE_TAG = re.compile(r"""<([a-zA-Z][a-zA-Z0-9-]*)((?:[ \t\n]+[a-zA-Z_:][-a-zA-Z0-9_:.]*="[^"&]*")*)[ \t\n]*/?>""")
_SIMPLE_ATTR = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)="([^"]*)\"""")


def _check_html_fully(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """The reference check: the whole document through the HTML parser."""
    parser = _Collector(file, allow)
    parser.feed(text)
    parser.close()
    return parser.found


def check_html(text: str, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """Every external load in one HTML or SVG document: what parsing all of it finds, at a fraction of the cost."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no bytes to search
        return _check_html_fully(text, file, allow)
    return check_html_bytes(data, file, allow)


def decode(data: bytes) -> str:
    """A file's text as ``Path.read_text`` reads it: undecodable bytes replaced (universal newlines: the caller)."""
    return data.decode("utf-8", errors="replace")


# The fast path works on the UTF-8 bytes, lower-cased (ASCII only: fast, and every offset stays put); each piece
# that may load something is decoded alone, which gives the text decoding all of it would (a piece starts at '<'
# and ends at '>', and an ASCII byte is never part of a multi-byte or an invalid sequence). A page is mostly text,
# table cells and SVG shapes, which load nothing: only a tag with a URL attribute, a style attribute holding url(),
# @import or a character reference, and a <style> element can. The bytes are searched for those; each hit's tag
# (or style element) goes to the parser above, in document order; comments and a script's text are skipped as the
# parser skips them. A hit, comment or script that lies in no tag the fast path can delimit (broken markup, text
# that looks like a tag) sends the whole page through the parser. The patterns spell out what the parser's str
# patterns match beyond ASCII: Unicode white space (its \s), and the letters that its lower-casing (KELVIN SIGN in
# "background") or re.IGNORECASE (dotted and dotless i in "@import") turn into ASCII ones.
_WHITE_SPACE = [chr(c).encode() for c in range(0x3001) if re.match(r"\s", chr(c))]  # none above U+3000 (tested)
_WS = b"(?:[" + b"".join(re.escape(c) for c in _WHITE_SPACE if len(c) == 1) + b"]|"
_WS += b"|".join(re.escape(c) for c in _WHITE_SPACE if len(c) > 1) + b")"
# Any byte of those: where a longer match costs only time (a suspect), one class is much faster to repeat.
_WS_BYTES = b"[" + b"".join(re.escape(bytes([b])) for b in sorted(set(b"".join(_WHITE_SPACE)))) + b"]"
_ATTRS = rb"""[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*"""  # a tag's attributes: quoted values may hold '>'
_TAG = re.compile(rb"<[a-zA-Z]" + _ATTRS + rb">")
_LOADS = rb"(?:&|url" + _WS_BYTES + rb"*\(|@(?:i|\xc4\xb0|\xc4\xb1)mport)"
# One literal-led pattern each (an alternation is many times slower); "src(?:set)?" finds srcset, "href" xlink:href,
# "action" formaction.
_URL_NAMES = (rb"src(?:set)?", rb"href", rb"poster", rb"action", rb"data", rb"bac(?:k|\xe2\x84\xaa)ground")


def _then_load(stop: bytes) -> bytes:
    """A value's bytes (none of ``stop``) up to the first load in it: what ``[^<stop>]*?`` then a load matches, with
    the bytes that cannot start a load taken in one atomic run instead of trying a load after each one (a page can
    hold hundreds of ``style="text-align: right;"``). Atomic groups, not possessive quantifiers (``*+``): Python
    3.11.0 to 3.11.4 match those wrongly where what they repeat can backtrack (CPython gh-106052), and missed the
    loads here. ``(?>x*)`` means what ``x*+`` means; on 3.11.7 it took about 15 % longer over 64 MB of style-heavy
    HTML (396 against 344 ms), and a plain ``*`` six times as long."""
    run = rb"(?>[^" + stop + rb"&u@]*)"
    return run + rb"(?>(?:(?!" + _LOADS + rb")[u@]" + run + rb")*)" + _LOADS


# A double-quoted, single-quoted or bare value with a load in it
_STYLE_VALUE = (
    b"(?:" + b"|".join((b'"' + _then_load(b'"'), b"'" + _then_load(b"'"), rb"(?![\"'])" + _then_load(rb">\s"))) + b")"
)
# A URL attribute whose value is plainly local (no ':', '//', '\\', character reference or control character: urlsplit
# finds neither scheme nor host in it, nor in any part of it) loads nothing wherever it stands, so it is no hit: in a
# tag, the parser reads exactly that value; anywhere else, it is no attribute at all.
_LOCAL_VALUE = rb'[^"&:\\\x00-\x1f/]*(?:/[^"&:\\\x00-\x1f/]+)*/?'
_SUSPECTS = (
    *(re.compile(name + _WS_BYTES + rb'*=(?!"' + _LOCAL_VALUE + rb'")') for name in _URL_NAMES),
    re.compile(rb"style" + _WS_BYTES + rb"*=+" + _WS_BYTES + rb"*" + _STYLE_VALUE),
)
# What the parser skips: a comment (to '--' '>', white space between), a script's or style's text (the tag name
# ends where the parser's does; the text ends at the first end tag the parser accepts).
_SPECIAL = re.compile(rb"<!--|<(script|style)(?=[\t\n\r\f />\x00])")
_COMMENT_END = re.compile(rb"--" + _WS + rb"*>")
_TEXT_END = {name: re.compile(rb"</" + _WS + rb"*" + name + _WS + rb"*>") for name in (b"script", b"style")}


def check_html_bytes(data: bytes, file: str, allow: Sequence[str] = DEFAULT_ALLOW) -> list[Violation]:
    """:func:`check_html` over a document's UTF-8 bytes (invalid bytes read as U+FFFD, as :func:`decode` does)."""
    pieces = _pieces(data, data.lower())
    if pieces is None:
        return _check_html_fully(decode(data), file, allow)
    parser = _Collector(file, allow)
    for start in sorted(pieces):
        parser.feed_piece(*pieces[start])
    parser.close()
    return parser.found


def _pieces(data: bytes, lower: bytes) -> dict[int, tuple[bytes, bytes]] | None:
    """Start → (markup, closing) of each piece that may load something; None when the fast path cannot tell."""
    pieces: dict[int, tuple[bytes, bytes]] = {}
    skipped: list[tuple[int, int]] = []  # comments, a script's text, style elements (taken whole, with '</style>')
    pos = 0
    while (m := _SPECIAL.search(lower, pos)) is not None:
        if lower.rfind(b"<", 0, m.start()) > lower.rfind(b">", 0, m.start()):
            return None  # maybe inside a tag ('<a title="<!--" ...'): only the parser knows
        if m.group(1) is None:
            end = _COMMENT_END.search(lower, m.end())
            if end is None:
                return None  # the parser reads an unclosed comment as text up to the next '>'
            pos = end.end()
            skipped.append((m.start(), pos))
            continue
        tag = _TAG.match(data, m.start())
        if tag is None:
            return None
        close = _TEXT_END[m.group(1)].search(lower, tag.end())
        pos = len(data) if close is None else close.start()
        if m.group(1) == b"style":
            pieces[m.start()] = (data[m.start() : pos], b"</style>")
            skipped.append((m.start(), pos))
        else:
            skipped.append((tag.end(), pos))
    i = 0
    for at in sorted({m.start() for pattern in _SUSPECTS for m in pattern.finditer(lower)}):
        while i < len(skipped) and skipped[i][1] <= at:
            i += 1
        if i < len(skipped) and skipped[i][0] <= at:
            continue
        start = data.find(b"<", data.rfind(b">", 0, at) + 1, at)
        tag = _TAG.match(data, start) if start >= 0 else None
        if tag is None or tag.end() <= at:
            return None
        if start not in pieces:
            special = _SPECIAL.match(lower, start)
            pieces[start] = (tag.group(0), b"</script>" if special is not None and special.group(1) else b"")
    return pieces


def check_file(path: str, rel: str, clean: Container[str], allow: Sequence[str]) -> tuple[str, list[Violation]]:
    """One site file (``rel``: its name in the site): its digest (``css:``/``html:`` and the sha256 of its bytes) and
    its external loads, none when ``clean`` holds the digest (bytes an earlier build found clean)."""
    data = Path(path).read_bytes()
    css = path.lower().endswith(".css")
    digest = ("css:" if css else "html:") + hashlib.sha256(data).hexdigest()
    if digest in clean:
        return digest, []
    if b"\r" in data:  # universal newlines, as Path.read_text reads (the same on bytes: '\r' is never in a sequence)
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return digest, check_bytes(data, rel, allow, css=css)


def check_bytes(data: bytes, file: str, allow: Sequence[str], *, css: bool) -> list[Violation]:
    """A file's external loads, from its bytes (universal newlines already applied)."""
    return check_css(decode(data), file, allow) if css else check_html_bytes(data, file, allow)


def worker_main() -> None:
    """A worker process: reads ``{"allow", "clean", "files": [[path, rel], ...]}`` as JSON from stdin, writes
    ``[[digest, [[where, url], ...]], ...]`` (one entry per file, in order) as JSON to stdout."""
    job = json.loads(sys.stdin.buffer.read())
    allow, clean = tuple(job["allow"]), frozenset(job["clean"])
    out = []
    for path, rel in job["files"]:
        digest, found = check_file(path, rel, clean, allow)
        out.append([digest, [[v.where, v.url] for v in found]])
    sys.stdout.write(json.dumps(out))
