"""The heavy blocks of a page as ready HTML, so Markdown does not parse them again (pure).

Profiled, most of a site build went into Python-Markdown converting the generated pages' big tables cell by cell
and walking their inline SVG charts through its HTML parser. :func:`prerender` takes those blocks out of a page's
Markdown before the generator converts it and gives back their HTML, each block replaced by a placeholder paragraph;
:func:`restore` puts the HTML in place of the placeholders afterwards. The HTML is what Python-Markdown (with the
``tables`` extension, as ``mkdocs.yml`` configures it) writes for the same block, byte for byte: the tests render
every generated page both ways and compare.

* pipe tables whose cells hold only what ``bench.site`` writes into cells (escaped text, entities, code spans,
  links, emphasis, ``<span>`` tags); a table with anything else is left to Markdown whole;
* such a table in its box (``bench.site``'s ``scroll_box`` and ``records_box``);
* raw-HTML chart figures (``<figure class="bench-figure">`` … ``</figure>``), passed through verbatim as Markdown
  would pass them;
* tight bullet lists of one-line items (``- text``, not indented, no list a blank line away that Markdown would join
  to them), whose items hold only what a cell may hold;
* fenced code blocks (backticks and a plain language name, at the top level or in an admonition's body), when the
  caller passes ``code``: the generator's own converter of one block (the hook keeps one per build, and converts
  each distinct block once; pages repeat their engine's payload and commands).

A placeholder is ``BENCHBLOCK<nonce>N<k>X`` where the nonce is a hash of the page's whole Markdown: a record's text
is part of that Markdown, so it cannot name a placeholder of its own page, and :func:`restore` refuses any
placeholder it did not hand out and any it handed out that went missing.

Links inside the tables go through ``resolve`` (the generator turns ``page.md`` into its URL and checks that the
target exists, as it does for the links it converts itself). Blocks inside fenced code are never touched.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ._markup import RECORDS_BOX_OPEN, SCROLL_BOX_OPEN
from ._prerender_cells import _SEPARATOR, Resolve, _inline, _table, _Unsupported

__all__ = ["Prerendered", "prerender", "restore"]

Code = Callable[[str], str]  # a fenced code block's Markdown (not indented) -> its HTML as the generator writes it

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_FIGURE_START = '<figure class="bench-figure"'
# a table in a box (the opening line, a blank line, the table, a blank line, ``</div>``): the box's HTML opening tag
_BOXES = {opening: opening.removesuffix(" markdown>") + ">" for opening in (SCROLL_BOX_OPEN, RECORDS_BOX_OPEN)}
_DOWNLOADS_OPEN = '<p class="bench-downloads" markdown>'
_CODE_OPEN = re.compile(r"( *)(`{3,})[A-Za-z0-9_+-]*[ \t]*$")
_ADMONITION = re.compile(r"(?:!!!|\?\?\?\+?) [a-z]+(?: \"[^\"]*\")?[ \t]*$")
_LIST_ITEM = re.compile(r"- \S")
# a line that could start or continue a list (a marker, or indented): a list beside it is not one of its own
_LISTISH = re.compile(r"(?: |\t|[-+*] |[0-9]+[.)] )")
# an item's text that Markdown would read as more than inline text (a nested list, a quote, a heading, a rule)
_ITEM_BLOCK = re.compile(r"(?:[-+*>#]|[0-9]+[.)])(?:\s|$)|[-*_ ]+$")


@dataclass
class Prerendered:
    """A page's Markdown with its heavy blocks replaced by placeholders, and each placeholder's HTML."""

    markdown: str
    blocks: dict[str, str] = field(default_factory=dict)


def _closes(fence: str, marker: str, line: str) -> bool:
    """True when ``line`` (starting with ``marker``) closes the code fence opened by ``fence``."""
    return marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker) :]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" "))]


def prerender(markdown: str, resolve: Resolve, code: Code | None = None) -> Prerendered:
    """Take the tables, chart figures, one-line bullet lists and (given ``code``) fenced code blocks out of
    ``markdown`` (see the module docstring)."""
    if not any(x in markdown for x in ("|", _FIGURE_START, "- ", "```", _DOWNLOADS_OPEN)):
        return Prerendered(markdown)
    nonce = hashlib.sha1(markdown.encode("utf-8")).hexdigest()[:12]
    lines = markdown.split("\n")
    out: list[str] = []
    blocks: dict[str, str] = {}
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fm = _FENCE.match(line)
        if fence is not None:
            if (
                fm
                and fm.group(1)[0] == fence[0]
                and len(fm.group(1)) >= len(fence)
                and not line.strip()[len(fm.group(1)) :]
            ):
                fence = None
            out.append(line)
            i += 1
            continue
        block_start = i == 0 or not lines[i - 1].strip()
        if fm:
            end = _code_end(lines, i) if code is not None and block_start and _contained(lines, i) else None
            if code is None or end is None:
                fence = fm.group(1)
                out.append(line)
                i += 1
                continue
            prefix = _indent(line)
            i = _stash(out, blocks, nonce, lines, i, end, code("\n".join(x[len(prefix) :] for x in lines[i:end])))
            continue
        stripped = line.lstrip(" ")
        end = i
        html_block: str | None = None
        if block_start and line in _BOXES:
            end, html_block = _boxed(lines, i, resolve)
        elif block_start and line.startswith(_DOWNLOADS_OPEN) and line.endswith("</p>"):
            end, html_block = i + 1, _downloads(lines, i, resolve)
        elif block_start and stripped.startswith("|") and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1].strip()):
            prefix = _indent(line)
            end = i
            while end < len(lines) and lines[end].startswith(prefix) and lines[end].strip().startswith("|"):
                end += 1
            if end == len(lines) or not lines[end].strip():
                try:
                    html_block = _table([x[len(prefix) :] for x in lines[i:end]], resolve)
                except _Unsupported:
                    html_block = None
        elif block_start and stripped.startswith(_FIGURE_START):
            prefix = _indent(line)
            end = i
            while end < len(lines) and not lines[end].rstrip().endswith("</figure>"):
                end += 1
            end += 1
            if end <= len(lines):
                inner = lines[i:end]
                if all(x.startswith(prefix) or not x.strip() for x in inner) and all(x.strip() for x in inner):
                    follows = end < len(lines) and lines[end].strip()  # Markdown adds no blank line then
                    html_block = "\n".join(x[len(prefix) :] for x in inner) + ("" if follows else "\n")
        elif block_start and _LIST_ITEM.match(line) and _apart(lines, i):
            end, html_block = _list(lines, i, resolve)
        if html_block is None:
            out.append(line)
            i += 1
            continue
        i = _stash(out, blocks, nonce, lines, i, end, html_block)
    return Prerendered("\n".join(out), blocks)


def _stash(
    out: list[str], blocks: dict[str, str], nonce: str, lines: Sequence[str], i: int, end: int, html_block: str
) -> int:
    """Put a placeholder paragraph for ``lines[i:end]`` (rendered as ``html_block``) into ``out``; the next line."""
    last = next(reversed(blocks), None)
    if last is not None and len(out) >= 2 and out[-1] == "" and out[-2] == _indent(lines[i]) + last:
        # right after another block: one placeholder for both (Markdown writes one line break between two blocks)
        blocks[last] += "\n" + html_block
        out.pop()  # the blank line between them
    else:
        key = f"BENCHBLOCK{nonce}N{len(blocks)}X"
        blocks[key] = html_block
        out.append(_indent(lines[i]) + key)
    if end < len(lines) and lines[end].strip():
        out.append("")  # Markdown ends a raw block at its closing tag; a placeholder paragraph needs a blank line
    return end


def _boxed(lines: Sequence[str], i: int, resolve: Resolve) -> tuple[int, str | None]:
    """A table in its box (``bench.site``'s ``scroll_box`` or ``records_box``: the ``<div>`` line, a blank line, the
    table, a blank line, ``</div>``) starting at ``lines[i]``: its end and its HTML (None: not one this module
    renders)."""
    end = i + 2
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    table = lines[i + 2 : end]
    closed = lines[end : end + 2] == ["", "</div>"] and (end + 2 == len(lines) or not lines[end + 2].strip())
    if lines[i + 1 : i + 2] != [""] or len(table) < 3 or not closed or not _SEPARATOR.match(table[1].strip()):
        return i, None
    try:
        return end + 2, f"{_BOXES[lines[i]]}\n{_table(table, resolve)}\n</div>"
    except _Unsupported:
        return i, None


def _downloads(lines: Sequence[str], i: int, resolve: Resolve) -> str | None:
    """A line of download links (``bench.site``'s ``downloads_line``, a ``<p markdown>`` of inline text) as HTML (None:
    not one this module renders)."""
    if i + 1 < len(lines) and lines[i + 1].strip():
        return None
    inner = lines[i][len(_DOWNLOADS_OPEN) : -len("</p>")]
    if "<" in inner or ">" in inner:
        return None
    try:
        return f'<p class="bench-downloads">{_inline(inner, resolve)}</p>'
    except _Unsupported:
        return None


def _contained(lines: Sequence[str], i: int) -> bool:
    """Whether the indented line ``i`` belongs to an admonition's body (or is not indented): the nearest line
    above it that is indented less opens an admonition exactly four spaces out (elsewhere an indented
    placeholder could read as indented code)."""
    prefix = _indent(lines[i])
    if not prefix:
        return True
    for j in range(i - 1, -1, -1):
        above = lines[j]
        if above.strip() and len(_indent(above)) < len(prefix):
            return len(_indent(above)) + 4 == len(prefix) and _ADMONITION.match(above.lstrip(" ")) is not None
    return False


def _code_end(lines: Sequence[str], i: int) -> int | None:
    """The line after the fenced code block opened at ``lines[i]`` when it is one this module hands to ``code``
    (backticks, a plain language name, closed by the same fence at the same indentation, no line inside that could
    close it, a blank line or the end after it); else None."""
    m = _CODE_OPEN.match(lines[i])
    if m is None:
        return None
    prefix, ticks = m.group(1), m.group(2)
    closing = prefix + ticks
    for j in range(i + 1, len(lines)):
        x = lines[j]
        if x == closing:
            return j + 1 if j + 1 == len(lines) or not lines[j + 1].strip() else None
        if x.strip() and (not x.startswith(prefix) or x.lstrip().startswith(ticks[:3])):
            return None
    return None


def _apart(lines: Sequence[str], i: int) -> bool:
    """Whether the nearest non-blank lines above and below the blank lines around ``lines[i]`` (a list's first or last
    item) cannot join its list: Markdown merges lists a blank line apart and takes indented lines into the last item."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j >= 0 and j < i - 1 and _LISTISH.match(lines[j]):
        return False
    k = i + 1
    while k < len(lines) and lines[k].startswith("- "):
        k += 1
    while k < len(lines) and not lines[k].strip():
        k += 1
    return not (k < len(lines) and _LISTISH.match(lines[k]))


def _list(lines: Sequence[str], i: int, resolve: Resolve) -> tuple[int, str | None]:
    """A tight bullet list of one-line items (``- text``) starting at ``lines[i]``: its end and its HTML (None: a
    list this module does not render)."""
    end = i
    items: list[str] = []
    while end < len(lines) and lines[end].startswith("- "):
        items.append(lines[end][2:])
        end += 1
    if end < len(lines) and lines[end].strip():
        return end, None
    if any(_ITEM_BLOCK.match(x) for x in items):
        return end, None
    try:
        html_items = [f"<li>{_inline(x.strip(), resolve)}</li>" for x in items]
    except _Unsupported:
        return end, None
    if any(not x.strip() or x != x.lstrip() for x in items):
        return end, None
    return end, "<ul>\n" + "\n".join(html_items) + "\n</ul>"


def restore(html_text: str, blocks: Mapping[str, str]) -> str:
    """``html_text`` with each placeholder paragraph replaced by its block's HTML; ValueError when one is missing or
    found twice (the generator changed the placeholder: nothing may be dropped or doubled silently). A paragraph that
    only looks like a placeholder (a record's text: it cannot know its page's nonce) stays as it is."""
    if not blocks:
        return html_text
    parts = _PLACEHOLDER.split(html_text)
    seen: set[str] = set()
    for j in range(1, len(parts), 2):
        key = parts[j]
        if key not in blocks:
            parts[j] = f"<p>{key}</p>"
            continue
        if key in seen:
            raise ValueError(f"pre-rendered block {key} found twice")
        seen.add(key)
        parts[j] = blocks[key]
    missing = set(blocks) - seen
    if missing:
        raise ValueError(f"{len(missing)} pre-rendered block(s) not found in the converted page")
    return "".join(parts)


_PLACEHOLDER = re.compile(r"<p>(BENCHBLOCK[0-9a-f]{12}N[0-9]+X)</p>")
