"""A page's Markdown as HTML without Python-Markdown, when it holds only what a record page holds once
:func:`bench.site.prerender` has taken its heavy blocks out (pure).

Profiled at 1,000 synthetic records, a record page's Markdown was about 2.8 kB once its tables, charts, lists and code
blocks were placeholders, and Python-Markdown still took about 4 ms to convert it (a new converter per page, its
extensions' passes over the tree): a fifth of what a record page's body costs. What remains is a small grammar, so
:func:`residual_html` writes it itself:

* ATX headings (``#`` to ``######``, one line, text after one space, no closing hashes, no link), each with the
  ``id`` and permanent link the ``toc`` extension gives it (``permalink: true``: ``¶``);
* one-line paragraphs of the inline Markdown a table cell may hold (``bench.site._prerender_cells``), among them a
  pre-rendered block's placeholder;
* admonitions and collapsible blocks (``!!! kind "title"``, ``??? kind "title"``, ``???+``) whose title is
  inline Markdown as a paragraph holds and whose body, indented four spaces, holds only such paragraphs.

Anything else (a list, a quote, a table or code left in the Markdown, raw HTML, ``{ attributes }``, a tab, a
paragraph of several lines, a heading inside an admonition, ...) makes it return None: the caller converts the page
with Python-Markdown as before. The HTML, the table of contents, the title MkDocs takes from the first heading and
the anchors it finds are what Python-Markdown and MkDocs make of the same Markdown, byte for byte:
``tests/site/test_residual_html.py`` converts pages both ways and compares.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ._prerender_cells import Resolve, _inline, _Unsupported

__all__ = ["ResidualHtml", "residual_html"]


@dataclass(frozen=True)
class ResidualHtml:
    """A page's body: its HTML, its table of contents (the ``toc`` extension's nested tokens: ``level``, ``id``,
    ``name``, ``html``, ``data-toc-label``, ``children``), the title MkDocs reads from a leading top-level heading
    (None: the page does not start with one) and the ids of its elements (MkDocs' anchors)."""

    html: str
    toc: list[dict[str, Any]]
    title: str | None
    anchors: frozenset[str]


_HEADING = re.compile(r"(#{1,6}) (\S(?:.*\S)?)")
_ADMONITION = re.compile(r'(!!!|\?\?\?\+?) ([a-z]+) "(\S(?:[^"]*\S)?)"')
# a paragraph's first characters that Markdown reads as the start of another block: a list, a quote, a rule, a
# fence, a heading, an ordered list, a reference definition is refused by the inline grammar itself ('[' ... ']:')
_BLOCK_START = re.compile(r"[-+*][ \t]|[-+*]$|>|#|`{3}|~{3}|[0-9]+[.)](?:[ \t]|$)|[=\-_*]{3}|\s")
_RULE = re.compile(r"[-*_ ]+$")
_ID_COUNT = re.compile(r"^(.*)_([0-9]+)$")
_TAG = re.compile(r"<[^>]*>")


class _NotResidual(Exception):
    """The Markdown holds something this module does not write."""


def residual_html(markdown: str, resolve: Resolve) -> ResidualHtml | None:
    """``markdown`` as HTML (see the module docstring); None when it holds anything else. ``resolve``: a link's
    target as its URL (the page's link checker, as for the pre-rendered blocks)."""
    if any(c in markdown for c in "<\t\r\x02\x03\f\v") or not markdown.strip():
        return None
    try:
        return _Writer(resolve).page(markdown.split("\n"))
    except (_NotResidual, _Unsupported):
        return None


class _Writer:
    def __init__(self, resolve: Resolve) -> None:
        self.resolve = resolve
        self.ids: set[str] = set()
        self.tokens: list[dict[str, Any]] = []
        self.title: str | None = None

    def page(self, lines: list[str]) -> ResidualHtml:
        out: list[str] = []
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if i + 1 < n and lines[i + 1].strip() and not line.startswith(("!!!", "???")):
                raise _NotResidual("a block of more than one line")
            if line.startswith("#"):
                out.append(self.heading(line, first=not out))
                i += 1
            elif line.startswith(("!!!", "???")):
                html_block, i = self.admonition(lines, i)
                out.append(html_block)
            else:
                out.append(self.paragraph(line))
                i += 1
        return ResidualHtml("\n".join(out), _nest(self.tokens), self.title, frozenset(self.ids))

    def heading(self, line: str, *, first: bool) -> str:
        m = _HEADING.fullmatch(line)
        if m is None or m.group(2).endswith("#") or "[" in m.group(2):
            # a link: the toc extension keeps its HTML as written, before MkDocs resolves the link
            raise _NotResidual(line)
        level = len(m.group(1))
        inner = _inline(m.group(2), self.resolve)
        name = _strip_tags(inner)
        anchor = _unique(_slugify(html.unescape(name)), self.ids)
        self.tokens.append(
            {"level": level, "id": html.unescape(anchor), "name": name, "html": inner, "data-toc-label": ""}
        )
        if first and level == 1:
            self.title = _strip_tags(inner)
        permalink = f'<a class="headerlink" href="#{html.escape(anchor)}" title="Permanent link">&para;</a>'
        return f'<h{level} id="{html.escape(anchor)}">{inner}{permalink}</h{level}>'

    def paragraph(self, text: str) -> str:
        return f"<p>{self.text(text)}</p>"

    def text(self, text: str) -> str:
        """One line of inline Markdown that Markdown would not read as the start of a block, as HTML."""
        if _BLOCK_START.match(text) or _RULE.match(text) or text != text.strip() or text.endswith("\\"):
            raise _NotResidual(text)
        return _inline(text, self.resolve)

    def admonition(self, lines: list[str], i: int) -> tuple[str, int]:
        m = _ADMONITION.fullmatch(lines[i])
        if m is None:
            raise _NotResidual(lines[i])
        marker, kind, title = m.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith("    ")):
            body.append(lines[j])
            j += 1
        while body and not body[-1].strip():
            body.pop()
        paragraphs: list[str] = []
        for k, line in enumerate(body):
            if not line.strip():
                continue
            if k + 1 < len(body) and body[k + 1].strip():
                raise _NotResidual("a block of more than one line")
            text = line[4:]
            if text.startswith(("#", "!!!", "???")):
                raise _NotResidual(line)
            paragraphs.append(self.paragraph(text))
        if not paragraphs:
            raise _NotResidual(lines[i])
        if j < len(lines) and lines[j - 1].strip():
            raise _NotResidual("an admonition followed by a line without a blank line between")
        escaped = self.text(title)  # a collapsible block's summary is read as Markdown blocks
        if marker == "!!!":
            head = f'<div class="admonition {kind}">\n<p class="admonition-title">{escaped}</p>'
            return "\n".join([head, *paragraphs, "</div>"]), j
        opened = ' open="open"' if marker.endswith("+") else ""
        head = f'<details class="{kind}"{opened}>\n<summary>{escaped}</summary>'
        return "\n".join([head, *paragraphs, "</details>"]), j


def _strip_tags(text: str) -> str:
    """Text of inline HTML as the ``toc`` extension and MkDocs take a heading's name (tags out, whitespace
    collapsed; entities kept). The inline HTML here holds no comment and no ``>`` inside an attribute value."""
    return " ".join(_TAG.sub("", text).split())


def _slugify(value: str) -> str:
    """The ``toc`` extension's default slug (separator ``-``)."""
    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def _unique(anchor: str, ids: set[str]) -> str:
    """``anchor``, or with ``_1``, ``_2``, ... appended until it is not in ``ids`` (the ``toc`` extension's rule);
    added to ``ids``."""
    if anchor in ids or not anchor:
        m = _ID_COUNT.match(anchor)
        base, count = (m.group(1), int(m.group(2))) if m else (anchor, 0)
        while True:
            count += 1
            anchor = f"{base}_{count}"
            if anchor not in ids:
                break
    ids.add(anchor)
    return anchor


def _nest(tokens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flat heading tokens nested as the ``toc`` extension nests them, skipped and out-of-order levels included: a
    deeper heading becomes a child of the one before it; a shallower one closes every open parent at its level or
    deeper and joins the innermost parent left (else the top)."""
    top: list[dict[str, Any]] = []
    open_parents: list[dict[str, Any]] = []  # the headings whose children the next heading may join
    depths: list[int] = []  # the levels in force: the top's, then one per open parent
    last: dict[str, Any] | None = None
    for flat in tokens:
        token = {**flat, "children": []}
        level = token["level"]
        if last is None:
            top.append(token)
            depths.append(level)
        else:
            if level < depths[-1]:
                depths.pop()
                closing = 0
                for parent in reversed(open_parents):
                    if level > parent["level"]:
                        break
                    closing += 1
                if closing:
                    del depths[-closing:]
                    del open_parents[-closing:]
                depths.append(level)
            if level == depths[-1]:
                (open_parents[-1]["children"] if open_parents else top).append(token)
            else:
                last["children"].append(token)
                open_parents.append(last)
                depths.append(level)
        last = token
    return top
