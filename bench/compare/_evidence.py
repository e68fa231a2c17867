"""What a ratio shows, and what a level shows: the evidence rules behind every verdict (pure).

A ratio (candidate / baseline) is

* ``indicative`` when it has no interval: the records hold neither per-request samples nor repeated runs, so
  it is a point estimate and never makes a side "faster";
* ``no_difference`` when its confidence interval lies inside the noise floor, ``1 ± noise_floor``
  (``comparison.noise_floor`` in ``benchbook.yaml``): whatever difference there is, it is smaller than what
  repeated runs of one configuration show anyway;
* ``decided`` when its interval lies entirely beyond the noise floor (it excludes no-difference and the floor):
  only then is one side called faster;
* ``unresolved`` otherwise (the interval contains 1, or straddles an edge of the floor).

A level's result comes from its speed figures (``bench.figures.SPEED``): the side every decided figure
favours, ``mixed`` when decided figures disagree, else ``unresolved``, ``no_difference`` or ``indicative``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from bench.figures import SPEED

from ._result import Evidence, LevelComparison, MetricComparison, Ratio, Winner

__all__ = ["Estimate", "classify", "estimate_of", "floor_text", "level_winner", "within_floor"]

Estimate = Literal["bootstrap", "point", "mixed"]


def floor_text(noise_floor: float) -> str:
    """``±5%`` (whole percent when it is one, else one decimal)."""
    pct = noise_floor * 100
    return f"±{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"±{pct:.1f}%"


def within_floor(value: float, noise_floor: float) -> bool:
    return 1.0 - noise_floor <= value <= 1.0 + noise_floor


def classify(ratio: Ratio, noise_floor: float) -> Evidence:
    """The evidence one ratio gives (see the module docstring)."""
    if ratio.value is None or ratio.lo is None or ratio.hi is None:
        return "indicative"
    low, high = 1.0 - noise_floor, 1.0 + noise_floor
    if ratio.lo > high or ratio.hi < low:
        return "decided"
    if ratio.lo >= low and ratio.hi <= high:
        return "no_difference"
    return "unresolved"


def level_winner(metrics: Sequence[MetricComparison]) -> Winner:
    """What a level's speed figures show together (see the module docstring)."""
    speed = [m for m in metrics if m.metric in SPEED and m.ratio.value is not None]
    if not speed:
        return "none"
    leaders = {m.leader for m in speed if m.decided}
    if len(leaders) > 1:
        return "mixed"
    if leaders:
        leader = leaders.pop()
        assert leader is not None
        return leader
    kinds = {m.evidence for m in speed}
    if "unresolved" in kinds:
        return "unresolved"
    if "no_difference" in kinds:
        return "no_difference"
    return "indicative"


def estimate_of(rows: Sequence[LevelComparison]) -> Estimate:
    """Whether the ratios of these levels have intervals: all (``bootstrap``), none (``point``), or some."""
    has = {m.ratio.has_interval for r in rows for m in r.metrics if m.ratio.value is not None}
    return "bootstrap" if has == {True} else "point" if True not in has else "mixed"
