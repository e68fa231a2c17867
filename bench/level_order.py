"""How a record's levels are ordered and named, everywhere: comparisons and verdicts, record pages, charts, history
tables, the PR report and :func:`bench.frame`.

* Order: levels with a concurrency ascending, then levels stated without one by label, the ``saturation`` level
  last (it is the highest load, whatever its concurrency was).
* Name: ``C=8``, else the level's label (``saturation``).
* A level without a concurrency is never placed at an invented x on a chart: :func:`unplaced_text` says what it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

__all__ = ["SATURATION", "LevelLike", "level_name", "level_sort_key", "sorted_levels", "unplaced_text"]

SATURATION = "saturation"


class LevelLike(Protocol):
    """Anything that names a level: a record's ``Level``, a compared level."""

    @property
    def concurrency(self) -> int | None: ...

    @property
    def label(self) -> str | None: ...


L = TypeVar("L", bound=LevelLike)


def level_sort_key(level: LevelLike) -> tuple[int, int, str]:
    """Numeric concurrencies in order, then other labels, then ``saturation`` last."""
    if level.concurrency is not None:
        return (0, level.concurrency, "")
    label = level.label or ""
    return (2 if label == SATURATION else 1, 0, label)


def sorted_levels(levels: Iterable[L]) -> list[L]:
    return sorted(levels, key=level_sort_key)


def level_name(level: LevelLike) -> str:
    """``C=8``, else the label (plain text, not escaped)."""
    return f"C={level.concurrency}" if level.concurrency is not None else (level.label or "?")


def unplaced_text(level: LevelLike) -> str:
    """How a level without a concurrency is described where a chart would need its x: never an invented one."""
    if (level.label or "").lower() == SATURATION:
        return "at saturation, concurrency not stated"
    return f"{level.label}, concurrency not stated"
