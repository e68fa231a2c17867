"""Escaping text that comes from records before it reaches a page.

Every string a record (or a dead-end note) supplies passes through one of these, and each of them first hides
any secret in it (:func:`bench.redact.redact_text`): a key, a token, a URL's user-info or a private-key block
that reached a record never reaches a page.

* :func:`md_text` for Markdown prose and table cells: HTML is neutralised (``<`` becomes ``&lt;``) and every
  character Markdown gives a meaning to is backslash-escaped, so ``[x](javascript:...)`` stays text;
* :func:`html_text` / :func:`html_attr` inside raw HTML or SVG;
* :func:`md_code_block` for logs and command lines, fenced so that no content can close the fence.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache

from bench.redact import redact_text

__all__ = [
    "BLOCK_LIMIT",
    "TEXT_LIMIT",
    "front_matter_title",
    "html_attr",
    "html_text",
    "md_code",
    "md_code_block",
    "md_inline",
    "md_text",
    "shown",
]

# Characters Python-Markdown (with the tables and attr_list extensions) treats specially when
# unescaped; all of them accept a backslash escape.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")
_WS = re.compile(r"\s+")
_ONLY_EQ = re.compile(r"^=+$")


TEXT_LIMIT = 4000
"""The most characters of one record string a page shows inline (a cell, a sentence, a title); more is cut
visibly. The schema caps titles and notes; this keeps any other field (a model name, an argument) from
swelling every page that lists the record."""
BLOCK_LIMIT = 20000
"""The most characters of a code block (a launch command, a log excerpt, the server's own payload)."""


def shown(text: object, limit: int = TEXT_LIMIT) -> str:
    """``text`` as a string fit to show: secrets hidden (:func:`bench.redact.redact_text` remembers the strings that
    pages repeat), and cut visibly after ``limit`` characters."""
    s = redact_text(str(text))
    if len(s) > limit:
        s = f"{s[:limit]} … [{len(s) - limit:,} more characters not shown]"
    return s


def html_text(text: object) -> str:
    """Text for an HTML element's content."""
    s = str(text)
    return _html_text_short(s) if len(s) <= _SHORT else html.escape(shown(s), quote=False)


def html_attr(text: object) -> str:
    """Text for a double- or single-quoted HTML attribute value."""
    s = str(text)
    return _html_attr_short(s) if len(s) <= _SHORT else html.escape(shown(s), quote=True)


_SHORT = 200
"""Texts up to this long are remembered escaped: a chart's values, series names and tooltips, a table's cells recur
on every page that shows them (a cold site build escapes hundreds of thousands of them, most of them seen before)."""


@lru_cache(maxsize=1 << 15)
def _html_text_short(text: str) -> str:
    return html.escape(shown(text), quote=False)


@lru_cache(maxsize=1 << 13)
def _html_attr_short(text: str) -> str:
    return html.escape(shown(text), quote=True)


def md_text(text: object) -> str:
    """Text for Markdown prose or a table cell: one line, no markup, no HTML."""
    s = str(text)
    return _md_text_short(s) if len(s) <= _SHORT else _md_text(s)


@lru_cache(maxsize=1 << 15)
def _md_text_short(text: str) -> str:  # cells (numbers, names, statuses) recur on every page that lists them
    return _md_text(text)


def _md_text(text: str) -> str:
    flat = _WS.sub(" ", shown(text)).strip()
    # Markdown specials first (so that the '#' of entities stays intact), then HTML. A text made only of
    # '=' would underline the line above into a heading: such '=' become entities.
    escaped = html.escape(_MD_SPECIAL.sub(r"\\\1", flat), quote=False)
    return escaped.replace("=", "&#61;") if _ONLY_EQ.match(flat) else escaped


_MD_INLINE_SPECIAL = re.compile(r"([\\`*_{}\[\]|])")
_BLOCK_START = re.compile(r"^(\d*)([#+=.)-])")


def md_inline(text: object) -> str:
    """Like :func:`md_text` for sentences that keep their punctuation readable in the Markdown source
    (``2.2×``, ``C=1–C=8``): HTML is neutralised, emphasis, code, link and table characters are escaped,
    and a line start that Markdown would read as a heading, quote or list is escaped."""
    flat = _WS.sub(" ", shown(text)).strip()
    escaped = html.escape(_MD_INLINE_SPECIAL.sub(r"\\\1", flat), quote=False)
    return _BLOCK_START.sub(r"\1\\\2", escaped, count=1)


def md_code(text: object) -> str:
    """An inline code span holding ``text`` verbatim (one line; secrets hidden)."""
    flat = _WS.sub(" ", shown(text)).strip()
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def md_code_block(text: str, *, lang: str = "text", indent: str = "") -> str:
    """A fenced code block holding ``text`` verbatim (secrets hidden); the fence is longer than any backtick run
    inside."""
    text = shown(text, BLOCK_LIMIT)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    lines = [fence + lang, *text.rstrip("\n").split("\n"), fence]
    return "\n".join(indent + line if line else line for line in lines)


_TITLE_SAFE = str.maketrans({"<": "‹", ">": "›", "&": "+", '"': "”", "\\": "/", "`": "'"})


def front_matter_title(text: object) -> str:
    """A ``title:`` front-matter line for a page whose title comes from a record.

    Themes print a page title into ``<title>`` and the navigation without escaping (and some unescape
    it first), so characters that could start markup are replaced by look-alikes instead of escaped.
    """
    flat = _WS.sub(" ", shown(text)).strip().translate(_TITLE_SAFE)
    return "---\ntitle: " + json.dumps(flat, ensure_ascii=False) + "\n---\n\n"
