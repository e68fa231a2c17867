"""The confidence interval of one side's figure at one level (pure): what a chart's band around a line shows.

``level_interval`` takes the same level of several runs of one configuration (see ``runs.runs_of``) and gives
the mean over runs with a percentile bootstrap interval:

* when every run holds per-request samples, the hierarchical bootstrap of ``bootstrap.bootstrap_side``
  (runs, then requests within each run), the same draws a comparison uses;
* otherwise, when at least two runs state the figure, a bootstrap of the mean over the runs' stated figures
  (runs resampled with replacement).

No interval (``None``) for one run without samples, or when a run does not state the figure. Failed levels
(``Level.failure``) are left out: they never enter a chart line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from bench.record.model import Level

from .bootstrap import RunValues, bootstrap_side, rng_for
from .metrics import metric_by_name, run_values, stated_metric

__all__ = ["Interval", "level_interval"]


@dataclass(frozen=True)
class Interval:
    point: float  # mean over runs
    lo: float
    hi: float
    n_runs: int
    n_requests: int | None  # requests the figure rests on (None: resampled over runs' stated figures)
    method: Literal["requests", "runs"]
    confidence: float


def level_interval(
    metric: str,
    levels: Sequence[Level],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    label: str = "",
) -> Interval | None:
    """Mean over runs of ``metric`` (a name in ``metrics.METRICS``) at one level, with its bootstrap interval."""
    spec = metric_by_name(metric)
    levels = [lv for lv in levels if not lv.failed]
    if not levels:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    rng = rng_for(seed, "interval", spec.name, label)
    runs = [run_values(spec, lv) for lv in levels]
    if all(r is not None for r in runs):
        result = bootstrap_side([r for r in runs if r is not None], n_boot, rng)
        lo, hi = np.percentile(result.draws, [tail, 100.0 - tail])
        return Interval(result.point, float(lo), float(hi), result.n_runs, result.n_requests, "requests", confidence)
    figures = [m.headline() for lv in levels if (m := stated_metric(spec, lv)) is not None]
    if len(figures) < 2 or len(figures) != len(levels):
        return None
    result = bootstrap_side([RunValues(values=figures, kind="mean")], n_boot, rng)
    lo, hi = np.percentile(result.draws, [tail, 100.0 - tail])
    return Interval(result.point, float(lo), float(hi), len(figures), None, "runs", confidence)
