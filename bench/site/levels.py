"""Small helpers about levels shared by tables and charts."""

from __future__ import annotations

from collections.abc import Iterable

from bench.record.model import Level

__all__ = ["level_name", "level_order", "sorted_levels"]


def level_order(level: Level) -> tuple[int, int, str]:
    """Concurrency levels ascending, then levels stated without a concurrency (by label)."""
    if level.concurrency is not None:
        return (0, level.concurrency, "")
    return (1, 0, level.label or "")


def sorted_levels(levels: Iterable[Level]) -> list[Level]:
    return sorted(levels, key=level_order)


def level_name(level: Level) -> str:
    """'C=8', or the label with the fact that no concurrency is stated (plain text, not escaped)."""
    if level.concurrency is not None:
        return f"C={level.concurrency}"
    return f"{level.label} (concurrency not stated)"
