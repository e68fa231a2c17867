"""One side's figure at one level, with its bootstrap draws when it has any (pure): the rule behind every ratio's
interval in a comparison and every band around a chart line.

The same level of one or more runs of one configuration (a record and its repeats, see ``_runs.runs_of``) gives

* when every run holds per-request samples: the hierarchical bootstrap of ``_bootstrap.bootstrap_side`` (runs,
  then requests within each run) over the figure's per-request values (``Figure.per_request``);
* otherwise, when two or more runs all state the figure: a bootstrap of the mean over the runs' stated figures
  (runs resampled with replacement);
* otherwise the mean of what is stated, with no draws (a point estimate: no interval).

``level_interval`` is that figure with its percentile interval, for charts and :func:`bench.frame`; failed levels
(``Level.failure``) are left out there, as they never enter a chart line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from bench.figures import Figure, figure
from bench.record.model import Level

from ._bootstrap import BootstrapResult, RunValues, bootstrap_side, rng_for
from ._sides import completed_requests, pooled

__all__ = ["Interval", "SideFigure", "level_interval", "run_values", "side_figure"]


def run_values(spec: Figure, level: Level) -> RunValues | None:
    """The level's per-request values for ``spec``; None when the level has no usable samples for it."""
    if spec.per_request is None or level.samples is None or not level.samples.ttft_ms:
        return None
    values = spec.per_request(level.samples)
    if not values:
        return None
    if spec.share_of is not None:
        shares_of = spec.share_of(level.samples)
        if not shares_of or len(shares_of) != len(values) or sum(shares_of) <= 0:
            return None
        return RunValues(values=values, kind="rate", duration_s=sum(shares_of), times=shares_of)
    if spec.kind == "mean":
        return RunValues(values=values, kind="mean")
    if not level.duration_s:
        return None
    times = list(level.samples.e2e_ms)
    return RunValues(values=values, kind="rate", duration_s=level.duration_s, times=times if sum(times) > 0 else None)


@dataclass(frozen=True)
class SideFigure:
    """One side's figure at one level: the point estimate, its bootstrap (None: no interval), what it rests on."""

    point: float
    boot: BootstrapResult | None
    requests: int | None  # requests the figure rests on, pooled over runs (None: not stated)
    runs: int
    method: Literal["requests", "runs", "point"]
    approximate: bool = False


def side_figure(spec: Figure, levels: Sequence[Level], n_boot: int, seed: int, *labels: str) -> SideFigure | None:
    """``spec`` over these runs' levels by the rule of the module docstring; None when no run states it."""
    runs = [run_values(spec, lv) for lv in levels]
    if levels and all(r is not None for r in runs):
        res = bootstrap_side([r for r in runs if r is not None], n_boot, rng_for(seed, spec.key, *labels))
        return SideFigure(res.point, res, res.n_requests, res.n_runs, "requests")
    stated = [m for lv in levels if (m := spec.metric(lv)) is not None]
    if not stated:
        return None
    values = [m.headline() for m in stated]
    approx = any(m.approximate for m in stated)
    n = pooled([m.n for m in stated])
    if n is None:
        n = pooled([completed_requests(lv) for lv in levels])
    if len(stated) >= 2 and len(stated) == len(levels):
        rng = rng_for(seed, spec.key, "runs", *labels)
        res = bootstrap_side([RunValues(values=values, kind="mean")], n_boot, rng)
        return SideFigure(res.point, res, n, len(values), "runs", approx)
    return SideFigure(sum(values) / len(values), None, n, len(values), "point", approx)


@dataclass(frozen=True)
class Interval:
    point: float  # mean over runs
    lo: float
    hi: float
    n_runs: int
    n_requests: int | None  # requests the figure rests on
    method: Literal["requests", "runs"]
    confidence: float


def level_interval(
    key: str,
    levels: Sequence[Level],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    label: str = "",
) -> Interval | None:
    """Mean over runs of the figure ``key`` (a key of ``bench.figures``) at one level, with its bootstrap interval;
    None without one (one run without samples, a run that does not state it, or only failed levels)."""
    spec = figure(key)
    usable = [lv for lv in levels if not lv.failed]
    if not usable:
        return None
    found = side_figure(spec, usable, n_boot, seed, "interval", label)
    if found is None or found.boot is None or found.method == "point":
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(found.boot.draws, [tail, 100.0 - tail])
    requests = found.requests if found.method == "requests" else None
    return Interval(found.point, float(lo), float(hi), found.runs, requests, found.method, confidence)
