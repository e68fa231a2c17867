"""Descriptive statistics for latency distributions (pure, no I/O).

Percentiles use linear interpolation between closest ranks (NumPy's default ``linear`` method, the one
``np.percentile`` uses in SGLang's and vLLM's benchmark clients), so figures are comparable with theirs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Distribution", "describe", "percentile"]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values`` by linear interpolation; ``values`` must not be empty."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be within 0..100, got {q}")
    ordered = sorted(values)
    return _percentile_sorted(ordered, q)


def _percentile_sorted(ordered: Sequence[float], q: float) -> float:
    rank = (len(ordered) - 1) * q / 100.0
    lo = math.floor(rank)
    hi = math.ceil(rank)
    if lo == hi:
        return float(ordered[lo])
    frac = rank - lo
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)


@dataclass(frozen=True)
class Distribution:
    """Summary of ``n`` samples. ``stdev`` is the sample standard deviation (None for one sample)."""

    n: int
    mean: float
    p50: float
    p90: float
    p99: float
    min: float
    max: float
    stdev: float | None


def describe(values: Sequence[float]) -> Distribution | None:
    """Summarise ``values``; None when there are none (a figure resting on no samples is not a figure)."""
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    mean = math.fsum(ordered) / n
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in ordered) / (n - 1)) if n > 1 else None
    return Distribution(
        n=n,
        mean=mean,
        p50=_percentile_sorted(ordered, 50.0),
        p90=_percentile_sorted(ordered, 90.0),
        p99=_percentile_sorted(ordered, 99.0),
        min=ordered[0],
        max=ordered[-1],
        stdev=stdev,
    )
