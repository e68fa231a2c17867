"""Code blocks highlighted once per distinct block (MkDocs-specific: it wraps what ``pymdownx.highlight`` calls).

Profiled cold, Pygments took a large share of a site build: every record page shows its engine's settings as a JSON
block and the commands to measure it again as a bash block, and most of those texts recur (296 JSON blocks, 7
distinct, at 200 records). Pygments' ``highlight(code, lexer, formatter)`` is a pure function of the code, the
lexer's class and options and the formatter's class and options (which carry everything per block: CSS class, line
numbers, anchors, title), so its result is kept under exactly those, for :data:`KEPT` distinct blocks of up to
:data:`LONGEST` characters; anything else is highlighted as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pymdownx.highlight as pymdownx_highlight  # type: ignore[import-untyped]

__all__ = ["install", "memo_highlight"]

KEPT = 512
LONGEST = 256 * 1024


def _key(code: str, lexer: Any, formatter: Any) -> tuple[Any, ...] | None:
    try:
        lexer_options = tuple(sorted((k, repr(v)) for k, v in lexer.options.items()))
        formatter_options = tuple(sorted((k, repr(v)) for k, v in formatter.options.items()))
    except AttributeError:  # not a Pygments lexer and formatter as this module knows them
        return None
    return (code, type(lexer), lexer_options, type(formatter), formatter_options)


def memo_highlight(highlight: Callable[..., Any]) -> Callable[..., Any]:
    """``highlight`` with its results kept per (code, lexer, formatter) as the module docstring says."""
    kept: OrderedDict[tuple[Any, ...], str] = OrderedDict()

    def remembered(code: str, lexer: Any, formatter: Any, outfile: Any = None) -> Any:
        if outfile is not None:  # written to a file: not kept
            return highlight(code, lexer, formatter, outfile)
        key = _key(code, lexer, formatter) if len(code) <= LONGEST else None
        if key is None:
            return highlight(code, lexer, formatter)
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found
        out = highlight(code, lexer, formatter)
        kept[key] = out
        if len(kept) > KEPT:
            kept.popitem(last=False)
        return out

    remembered.__wrapped__ = highlight  # type: ignore[attr-defined]
    return remembered


def install() -> None:
    """Wrap ``pymdownx.highlight``'s Pygments call (once per process)."""
    current = pymdownx_highlight.highlight
    if not hasattr(current, "__wrapped__"):
        pymdownx_highlight.highlight = memo_highlight(current)
