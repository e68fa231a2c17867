"""Small helpers about levels shared by tables and charts."""

from __future__ import annotations

from collections.abc import Iterable

from bench.record.model import Level, Record

__all__ = ["failed_note", "level_name", "level_order", "sorted_levels"]


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


def failed_note(lines: Iterable[tuple[str, Record]]) -> str:
    """``failed levels, not drawn: ngram C=64, C=128``, or "" when no drawn record has a failed level.

    A failed level (``Level.failure``) never enters a chart line or a Pareto front; the chart says so. When every
    line draws the same record (a record page), the levels are named without a series name."""
    by_record: dict[str, tuple[str, list[str]]] = {}
    for name, record in lines:
        failed = [level_name(lv) for lv in sorted_levels(record.levels) if lv.failed]
        if failed and record.id not in by_record:
            by_record[record.id] = (name, failed)
    if not by_record:
        return ""
    if len({r.id for _, r in lines}) == 1:
        ((_, failed),) = by_record.values()
        return "failed levels, not drawn: " + ", ".join(failed)
    return "failed levels, not drawn: " + "; ".join(f"{name} {', '.join(f)}" for name, f in by_record.values())
