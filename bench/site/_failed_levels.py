"""Failed levels, shown visibly with their reason (``Level.failure``, set by the runner when a level's error rate
passed the run's threshold, or by the v1 -> v2 migration for a level v1 flagged).

A failed level stays in its record, but never enters a comparison, a chart line, a Pareto front, a history series
or a verdict; record pages and experiment pages say so in a box naming each one, and a chart in its note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bench.level_order import level_name, sorted_levels
from bench.md_table import md_table
from bench.record.model import Level, Record

from ._escape import md_text
from ._markup import admonition
from ._paths import record_link

__all__ = ["experiment_failed_levels", "failed_note", "record_failed_levels"]

NEVER = "never enter a comparison, a chart line, a Pareto front, a history series or a verdict"


def record_failed_levels(levels: Sequence[Level]) -> str:
    """The record page's box: each failed level and why ("" when none failed)."""
    failed = [lv for lv in sorted_levels(levels) if lv.failed]
    if not failed:
        return ""
    items = "\n".join(f"- {md_text(level_name(lv))}: {md_text(lv.failure or '')}" for lv in failed)
    body = f"These levels failed. Their figures stay in the record, but they {NEVER}:\n\n{items}"
    return admonition("failure", f"{len(failed)} failed level(s)", body)


def experiment_failed_levels(records: Sequence[Record], page: str) -> str:
    """The experiment page's box: every failed level of its records, with the record and why ("" when none)."""
    rows = [
        [record_link(r, page), md_text(r.variant), md_text(level_name(lv)), md_text(lv.failure or "")]
        for r in records
        for lv in sorted_levels(r.levels)
        if lv.failed
    ]
    if not rows:
        return ""
    body = (
        f"{len(rows)} level(s) of this experiment's records failed. They stay in their records, but {NEVER}.\n\n"
        + md_table(["Record", "Variant", "Level", "Why it failed"], rows)
    )
    return admonition("failure", "Failed levels", body)


def failed_note(lines: Iterable[tuple[str, Record]]) -> str:
    """``failed levels, not drawn: ngram C=64, C=128``, or "" when no drawn record has a failed level.

    When every line draws the same record (a record page), the levels are named without a series name."""
    lines = list(lines)
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
