"""GitHub-flavoured Markdown for the PR comment: the one escaping function for record strings.

The report is posted on GitHub, where Markdown becomes HTML and then passes filters that read the rendered text:
``@name`` and ``@org/team`` mention people, ``#123`` links an issue, ``:name:`` becomes an emoji (some are images).
A record string must come out as its own text and nothing else: no image (``![](https://tracker…)``), no link, no
HTML (``<img onerror=…>``, ``</details>``), no mention, no reference, no code span, no table cell or fold broken
by ``|`` or a newline.

* :func:`escape_gfm` — inline text for a paragraph, a list item, a heading, a ``<summary>`` or a table cell:
  whitespace (newlines included) collapses to one space; control and bidirectional-override characters are
  dropped; ``<``, ``>`` and ``&`` become entities; every other ASCII punctuation character is backslash-escaped
  (CommonMark allows that for each of them, and it stops autolinks, emphasis, code spans, links, images,
  strikethrough, math and table pipes alike); a zero-width space (``&#8203;``) follows every ``@``, ``#`` and ``:``,
  so that GitHub's mention, issue-reference and emoji filters find nothing (Renovate escapes its PR bodies the
  same way: renovatebot/renovate, ``lib/util/markdown.ts``).
* :func:`shown` — what the report prints for a record value: ``bench.redact`` first, then :func:`escape_gfm`.
"""

from __future__ import annotations

import json
import re
import unicodedata

from bench.redact import redact_text

__all__ = ["escape_gfm", "shown"]

_PUNCT = frozenset("!\"#$%'()*+,-./:;=?@[\\]^_`{|}~")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_ZWSP_AFTER = frozenset("@#:")
_ZWSP = "&#8203;"
# Reorder or hide text: U+200E/F marks, U+202A–E embeddings and overrides, U+2066–9 isolates, U+FEFF.
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")
_SPACE = re.compile(r"\s+")
NOT_STATED = "—"


def escape_gfm(text: object) -> str:
    """``text`` as inert inline GitHub-flavoured Markdown (one line; see the module docstring)."""
    kept = "".join(c for c in str(text) if c.isspace() or not (c in _BIDI or unicodedata.category(c) == "Cc"))
    out: list[str] = []
    for ch in _SPACE.sub(" ", kept).strip():
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _PUNCT:
            out.append("\\" + ch)
        else:
            out.append(ch)
        if ch in _ZWSP_AFTER:
            out.append(_ZWSP)
    return "".join(out)


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _plain(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def shown(value: object, *, limit: int | None = None) -> str:
    """A record value for the report: redacted (``bench.redact.redact_text``), clipped to ``limit`` characters,
    escaped. ``None`` is shown as a dash."""
    if value is None:
        return NOT_STATED
    return escape_gfm(_clip(redact_text(_plain(value)), limit))
