"""Bootstrap confidence intervals for per-level statistics (pure; NumPy; seeded).

Within a run the unit of resampling is the request: a level's successful requests are resampled with
replacement and the statistic recomputed. When a configuration was measured several times (``bench run
--repeat N`` writes N records sharing a ``run_group``), the bootstrap is hierarchical: runs are resampled
with replacement first, then requests within each chosen run, and the statistic is the mean over the chosen
runs. This carries both the request-to-request and the run-to-run variation into the interval.

Two kinds of statistic:

* ``mean``: the mean of a per-request value (per-request tok/s, TPOT, TTFT);
* ``rate``: the sum of a per-request token count over the level's ``duration_s`` (throughput). Resampling
  n requests with replacement keeps the count at n, so the sum stays on the scale of the level's duration.
  The duration is scaled too: at a fixed concurrency a level lasts about (Σ E2E) / concurrency, so a resample
  lasts ``duration_s`` × (its Σ E2E) / (the observed Σ E2E). Without this, a fixed-length workload
  (``ignore_eos``, every request the same token count) would get a zero-width interval.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["BootstrapResult", "RunValues", "bootstrap_ratio", "bootstrap_side", "rng_for"]

FloatArray = npt.NDArray[np.float64]
Kind = Literal["mean", "rate"]


@dataclass(frozen=True)
class RunValues:
    """One run's per-request values for one statistic; ``duration_s`` is required for ``rate``, and
    ``times`` (each request's E2E time, any unit) scales a resample's duration when given."""

    values: Sequence[float]
    kind: Kind
    duration_s: float | None = None
    times: Sequence[float] | None = None

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("a run needs at least one per-request value")
        if self.kind == "rate" and not self.duration_s:
            raise ValueError("a rate statistic needs the level's duration_s")
        if self.times is not None and (len(self.times) != len(self.values) or sum(self.times) <= 0):
            raise ValueError("times must hold one positive E2E time per value")

    def point(self) -> float:
        x = np.asarray(self.values, dtype=np.float64)
        if self.kind == "mean":
            return float(x.mean())
        assert self.duration_s
        return float(x.sum() / self.duration_s)

    def resampled(self, idx: npt.NDArray[np.int64]) -> FloatArray:
        """The statistic for each row of request indices ``idx`` (shape: draws × requests)."""
        x = np.asarray(self.values, dtype=np.float64)[idx]
        if self.kind == "mean":
            return np.asarray(x.mean(axis=1), dtype=np.float64)
        assert self.duration_s
        duration = np.full(idx.shape[0], self.duration_s)
        if self.times is not None:
            t = np.asarray(self.times, dtype=np.float64)
            duration = duration * t[idx].sum(axis=1) / t.sum()
        return np.asarray(x.sum(axis=1) / duration, dtype=np.float64)


@dataclass(frozen=True)
class BootstrapResult:
    point: float
    draws: FloatArray
    n_requests: int
    n_runs: int


def rng_for(seed: int, *labels: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and stable labels, so one figure's draws do not depend on the others'."""
    return np.random.default_rng([seed, *(zlib.crc32(label.encode()) for label in labels)])


def bootstrap_side(runs: Sequence[RunValues], n_boot: int, rng: np.random.Generator) -> BootstrapResult:
    """Point estimate (mean over runs of each run's statistic) and ``n_boot`` hierarchical bootstrap draws."""
    if not runs:
        raise ValueError("bootstrap needs at least one run")
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    per_run = np.empty((len(runs), n_boot), dtype=np.float64)
    points = []
    for i, run in enumerate(runs):
        points.append(run.point())
        idx = rng.integers(0, len(run.values), size=(n_boot, len(run.values)))
        per_run[i] = run.resampled(idx)
    if len(runs) == 1:
        draws = per_run[0]
    else:
        chosen = rng.integers(0, len(runs), size=(n_boot, len(runs)))
        draws = per_run[chosen, np.arange(n_boot)[:, None]].mean(axis=1)
    return BootstrapResult(
        point=float(np.mean(points)),
        draws=draws,
        n_requests=sum(len(r.values) for r in runs),
        n_runs=len(runs),
    )


def bootstrap_ratio(
    baseline: BootstrapResult, candidate: BootstrapResult, confidence: float = 0.95
) -> tuple[float, float, float] | None:
    """(point, lo, hi) of candidate / baseline; None when a baseline figure is zero (no ratio exists)."""
    if baseline.point == 0 or np.any(baseline.draws == 0):
        return None
    ratios = candidate.draws / baseline.draws
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(ratios, [tail, 100.0 - tail])
    return candidate.point / baseline.point, float(lo), float(hi)
