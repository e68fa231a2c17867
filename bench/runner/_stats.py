"""Descriptive statistics of a latency distribution (pure, no I/O).

Percentiles are numpy's ``linear`` method (interpolation between closest ranks), the one ``np.percentile`` uses in
SGLang's and vLLM's benchmark clients, so figures are comparable with theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Distribution", "describe"]


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
    data = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(data, [50.0, 90.0, 99.0], method="linear")
    return Distribution(
        n=int(data.size),
        mean=float(data.mean()),
        p50=float(p50),
        p90=float(p90),
        p99=float(p99),
        min=float(data.min()),
        max=float(data.max()),
        stdev=float(data.std(ddof=1)) if data.size > 1 else None,
    )
