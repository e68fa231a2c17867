"""Which runs of one side enter the comparison at one level, and whether they are enough for a verdict (pure).

* A failed level (``Level.failure``, set by the runner when its error rate passed the threshold) never enters a
  comparison: its figures are not computed, and when every run of a side failed there, the level is left out
  naming the failure.
* A level whose error rate the record flags (older records, imports) is left out the same way, but its figures
  are still shown, marked left out.
* The minimum number of requests (``comparison.min_requests``) counts the completed requests of every usable
  run of the side at that level, pooled: 3 runs of 8 requests are 24 requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.record.model import Level

__all__ = ["SideLevels", "completed_requests", "pooled", "side_levels"]


@dataclass(frozen=True)
class SideLevels:
    """One side's runs at one level: those whose figures are compared, their pooled request count, and why the
    side gives no verdict there (``None``: it may)."""

    levels: tuple[Level, ...]
    requests: int | None  # completed requests pooled over ``levels``; None when a run does not state its count
    reason: str | None
    failed: bool = False  # every run failed: no figure of this level is compared
    dropped: str | None = None  # runs left out while others remain (named in the comparison's notes)


def completed_requests(level: Level) -> int | None:
    """The level's completed requests: stated, else its per-request samples; None when neither says."""
    if level.requests_completed is not None:
        return level.requests_completed
    return len(level.samples.ttft_ms) if level.samples is not None else None


def pooled(counts: Sequence[int | None]) -> int | None:
    """The sum of request counts over runs; None when a run does not state its count."""
    return sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None


def _flagged(level: Level) -> str | None:
    if level.errors is not None and level.errors.flagged:
        rate = level.errors.error_rate
        return "error rate flagged" + (f" ({rate:.0%})" if rate is not None else "")
    return None


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def side_levels(levels: Sequence[Level], min_requests: int) -> SideLevels:
    """Split one side's runs at one level into what is compared and why (see the module docstring)."""
    failed = [lv for lv in levels if lv.failed]
    flagged = [lv for lv in levels if not lv.failed and _flagged(lv)]
    usable = tuple(lv for lv in levels if not lv.failed and not _flagged(lv))
    dropped_parts = []
    if failed:
        dropped_parts.append(f"{len(failed)} of {len(levels)} run(s) failed there")
    if flagged:
        dropped_parts.append(f"{len(flagged)} of {len(levels)} run(s) have a flagged error rate there")
    if not usable:
        if flagged:
            reasons = sorted({r for lv in flagged if (r := _flagged(lv))})
            return SideLevels(tuple(flagged), None, "; ".join(reasons))
        why = sorted({lv.failure or "" for lv in failed})
        return SideLevels((), None, "failed: " + "; ".join(why), failed=True)
    total = pooled([completed_requests(lv) for lv in usable])
    reason = None
    if total is not None and total < min_requests:
        reason = f"fewer than {min_requests} requests ({total} in {_runs(len(usable))})"
    return SideLevels(usable, total, reason, dropped="; ".join(dropped_parts) or None)
