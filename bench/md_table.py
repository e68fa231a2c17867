"""Markdown pipe tables, for every renderer (site pages, ``bench compare --format md``, the PR report). Cells arrive
already escaped for their medium (``bench.site`` escapes for the site, ``bench.gate`` for GitHub); this only lays
out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["md_table", "number_cell", "ratio_cell"]

DASH = "—"


def number_cell(value: Any, fmt: str = ",.1f") -> str:
    """A measured number's cell, ``—`` where it was not measured (None, or not a number)."""
    return format(value, fmt) if isinstance(value, int | float) and not isinstance(value, bool) else DASH


def ratio_cell(value: Any, fmt: str = ".1f") -> str:
    """A ratio's cell: ``7.4×``, or ``—`` where it was not measured."""
    cell = number_cell(value, fmt)
    return DASH if cell == DASH else cell + "×"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: Sequence[str] | None = None) -> str:
    """A pipe table. ``align`` holds one of "l", "r", "c" per column (default left)."""
    if not rows:
        return ""
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    aligns = list(align) if align is not None else ["l"] * len(header)
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(marks[a] for a in aligns) + " |",
    ]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row has {len(row)} cells, header has {len(header)}")
        lines.append("| " + " | ".join(cell if cell else " " for cell in row) + " |")
    return "\n".join(lines)
