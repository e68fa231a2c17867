"""The cells of a pre-rendered table: inline Markdown of the kinds ``bench.site`` writes into cells, and pipe
tables, as ready HTML, byte for byte what Python-Markdown (with ``mkdocs.yml``'s extensions) writes for them (pure;
used by :mod:`bench.site._prerender`)."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Sequence

__all__ = ["Resolve"]

Resolve = Callable[[str], str]

# Characters a backslash escapes in Python-Markdown with the tables extension (others keep their backslash).
_ESCAPABLE = frozenset("\\`*_{}[]()>#+-.!|")
_INLINE = re.compile(
    r"(?P<esc>\\(?P<ch>.))"
    r"|(?P<code>(?P<ticks>`+)(?P<body>.+?)(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\[(?P<text>(?:\\.|[^\\\[\]])*)\]\((?P<url>[^\s()<>\"'&\\]*)\))"
    r"|(?P<strong>\*\*(?P<sbody>[^*\s](?:[^*]*[^*\s])?)\*\*)"
    r"|(?P<em>\*(?P<ebody>[^*\s](?:[^*]*[^*\s])?)\*)"
    r"|(?P<tag></?(?:span|strong|em|code|br|abbr|sup|sub|small|mark)\b[^<>@]*>)"
    r"|(?P<entity>&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)"
    r"|(?P<plain>[^\\`*_\[\]<>&!{}|]+)"
    r"|(?P<gt>>)"
    r"|(?<=\w)_+(?=\w)"  # underscores inside a word (max_tokens) are no emphasis
)
_SEPARATOR = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")


class _Unsupported(Exception):
    """The block holds Markdown this module does not render: leave it to Markdown."""


def _inline(text: str, resolve: Resolve) -> str:
    """Inline Markdown of one cell as HTML."""
    if "[" not in text:  # no link: nothing to resolve, and the same cells recur on every page
        return _inline_unlinked(text)
    return _convert(text, resolve)


def _no_link(url: str) -> str:
    raise AssertionError(f"a cell without '[' has no link: {url}")


@functools.lru_cache(maxsize=1 << 14)
def _inline_unlinked(text: str) -> str:
    return _convert(text, _no_link)


def _convert(text: str, resolve: Resolve) -> str:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = _INLINE.match(text, pos)
        if m is None:
            raise _Unsupported(text[pos : pos + 20])
        pos = m.end()
        if m.group("esc") is not None:
            ch = m.group("ch")
            if ch not in _ESCAPABLE:
                raise _Unsupported(m.group(0))
            out.append(html.escape(ch, quote=False))
        elif m.group("code") is not None:
            out.append(f"<code>{html.escape(m.group('body').strip(), quote=False)}</code>")
        elif m.group("link") is not None:
            href = html.escape(resolve(m.group("url")), quote=True)
            out.append(f'<a href="{href}">{_inline(m.group("text"), resolve)}</a>')
        elif m.group("strong") is not None:
            out.append(f"<strong>{_inline(m.group('sbody'), resolve)}</strong>")
        elif m.group("em") is not None:
            out.append(f"<em>{_inline(m.group('ebody'), resolve)}</em>")
        elif m.group("tag") is not None or m.group("entity") is not None:
            out.append(m.group(0))
        elif m.group("gt") is not None:
            out.append("&gt;")
        else:
            out.append(m.group(0))
    return "".join(out)


_ROW_SPECIAL = re.compile(r"[\\`|]")  # in a row, only these characters do anything but stand for themselves
_TICKS = re.compile(r"`+")
# atomic groups rather than possessive quantifiers (``*+``), which Python 3.11.0 to 3.11.4 match wrongly where what
# they repeat can backtrack (CPython gh-106052)
_CELLS = re.compile(r"((?>(?:(?>[^\\|]+)|\\.)*))\|", re.DOTALL)


def _split_row(row: str) -> list[str]:
    """A table row's cells, split as Python-Markdown splits them: on ``|`` outside code spans and escapes."""
    row = row.strip()
    if not (row.startswith("|") and row.endswith("|")) or row.endswith("\\|"):
        raise _Unsupported(row)
    body = row[1:-1]
    if "`" not in body:  # escapes only: each cell is a run of escaped or ordinary characters ended by a '|'
        return [c.strip() for c in _CELLS.findall(body + "|")]
    cells: list[str] = []
    start = 0
    m = _ROW_SPECIAL.search(body)
    while m is not None:
        i = m.start()
        c = body[i]
        if c == "\\":
            i += 2
        elif c == "`":
            run = len(_TICKS.match(body, i).group(0))  # type: ignore[union-attr]  # body[i] is a backtick
            close = body.find("`" * run, i + run)
            while close >= 0 and (close + run < len(body) and body[close + run] == "`"):
                close = body.find("`" * run, close + run + 1)
            if close < 0:
                raise _Unsupported(row)
            i = close + run
        else:
            cells.append(body[start:i])
            start = i = i + 1
        m = _ROW_SPECIAL.search(body, i)
    cells.append(body[start:])
    return [c.strip() for c in cells]


def _align(cell: str) -> str:
    """A column's alignment as the tables extension writes it with ``use_align_attribute`` (mkdocs.yml)."""
    c = cell.strip()
    left, right = c.startswith(":"), c.endswith(":")
    if left and right:
        return ' align="center"'
    if right:
        return ' align="right"'
    if left:
        return ' align="left"'
    return ""


def _table(lines: Sequence[str], resolve: Resolve) -> str:
    header = _split_row(lines[0])
    aligns = [_align(c) for c in _split_row(lines[1])]
    if len(aligns) != len(header) or len(lines) < 3:
        raise _Unsupported(lines[0])
    out = ["<table>", "<thead>", "<tr>"]
    out += [f"<th{a}>{_inline(c, resolve)}</th>" for c, a in zip(header, aligns, strict=True)]
    out += ["</tr>", "</thead>", "<tbody>"]
    opens = tuple(f"<td{a}>" for a in aligns)
    for line in lines[2:]:
        if "[" not in line:  # no link in the row: the same rows recur on many pages
            out.append(_row_unlinked(line, opens))
            continue
        cells = _split_row(line)
        if len(cells) != len(opens):
            raise _Unsupported(line)
        out.append("<tr>")
        out += [
            f"{td}{_inline_unlinked(c) if '[' not in c else _convert(c, resolve)}</td>"
            for c, td in zip(cells, opens, strict=True)
        ]
        out.append("</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


@functools.lru_cache(maxsize=1 << 14)
def _row_unlinked(line: str, opens: tuple[str, ...]) -> str:
    """A body row without a link (nothing to resolve) as its ``<tr>`` lines: a cold site build meets most rows
    (a level's statistics, an environment's fields, a server's arguments) on several pages."""
    cells = _split_row(line)
    if len(cells) != len(opens):
        raise _Unsupported(line)
    return "\n".join(
        ["<tr>", *(f"{td}{_inline_unlinked(c)}</td>" for c, td in zip(cells, opens, strict=True)), "</tr>"]
    )
