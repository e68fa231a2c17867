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

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from bench.figures import Figure, figure
from bench.record.model import Level

from ._bootstrap import BootstrapResult, RunValues, Stream, bootstrap_many, bootstrap_side, percentiles, stream
from ._sides import completed_requests, pooled

__all__ = [
    "INTERVAL_STREAM",
    "Interval",
    "SideFigure",
    "SideMemo",
    "level_interval",
    "level_intervals",
    "level_intervals_many",
    "run_values",
    "side_figure",
    "side_figures",
    "side_figures_kept",
    "side_figures_many",
]


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
    times = level.samples.e2e_ms  # the level's own list: one column of a bootstrap batch for all its rate figures
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


def _from_stated(
    spec: Figure, levels: Sequence[Level], n_boot: int, source: Stream, draw: bool = True
) -> SideFigure | None:
    stated = [m for lv in levels if (m := spec.metric(lv)) is not None]
    if not stated:
        return None
    values = [m.headline() for m in stated]
    approx = any(m.approximate for m in stated)
    n = pooled([m.n for m in stated])
    if n is None:
        n = pooled([completed_requests(lv) for lv in levels])
    if len(stated) >= 2 and len(stated) == len(levels):
        if not draw:
            return SideFigure(float(np.mean(values)), None, n, len(values), "runs", approx)
        runs = stream(source.seed, *source.labels, "runs")
        res = bootstrap_side([RunValues(values=values, kind="mean")], n_boot, runs)
        return SideFigure(res.point, res, n, len(values), "runs", approx)
    return SideFigure(sum(values) / len(values), None, n, len(values), "point", approx)


def side_figures_many(
    jobs: Sequence[tuple[Sequence[Figure], Sequence[Level]]], n_boot: int, seed: int, *labels: str, draw: bool = True
) -> list[dict[str, SideFigure | None]]:
    """:func:`side_figures` of many sides at once (one bootstrap batch: see ``_bootstrap.bootstrap_many``).

    ``draw=False``: the same figures without their bootstrap (``boot`` is None, ``method`` says which one there
    would be), for a caller that holds the intervals already."""
    source = stream(seed, *labels)
    outs: list[dict[str, SideFigure | None]] = []
    batch: list[list[list[RunValues]]] = []
    batched: list[tuple[int, list[Figure]]] = []
    for specs, levels in jobs:
        out: dict[str, SideFigure | None] = {}
        sampled: list[Figure] = []
        figures: list[list[RunValues]] = []
        for spec in specs:
            found = [run_values(spec, lv) for lv in levels]
            runs = [r for r in found if r is not None]
            if levels and len(runs) == len(found):
                sampled.append(spec)
                figures.append(runs)
            else:
                out[spec.key] = _from_stated(spec, levels, n_boot, source, draw)
        if sampled and not draw:
            for spec, given in zip(sampled, figures, strict=True):
                point = float(np.mean([r.point() for r in given]))
                out[spec.key] = SideFigure(point, None, sum(len(r.values) for r in given), len(given), "requests")
        elif sampled:
            batch.append(figures)
            batched.append((len(outs), sampled))
        outs.append(out)
    for (j, sampled), results in zip(batched, bootstrap_many(batch, n_boot, source) if batch else [], strict=True):
        for spec, res in zip(sampled, results, strict=True):
            outs[j][spec.key] = SideFigure(res.point, res, res.n_requests, res.n_runs, "requests")
    return [{spec.key: out[spec.key] for spec in specs} for (specs, _), out in zip(jobs, outs, strict=True)]


SideMemo = dict[tuple[Hashable, ...], dict[str, SideFigure | None]]
"""Side figures kept by :func:`side_figures_kept`: (the caller's key of a side, ``n_boot``, ``seed``, labels) → the
side's figures."""
SIDES_KEPT = 64
"""The most side levels a :data:`SideMemo` keeps (the least recently used go): each holds its figures' draws
(``n_boot`` floats each, 16 kB at 2,000), and a site compares a baseline with its experiment's variants one after
another."""


def side_figures_kept(
    jobs: Sequence[tuple[Sequence[Figure], Sequence[Level]]],
    keys: Sequence[Hashable],
    memo: SideMemo | None,
    n_boot: int,
    seed: int,
    *labels: str,
) -> list[dict[str, SideFigure | None]]:
    """:func:`side_figures_many`, each job's figures kept in ``memo`` under its key in ``keys`` (with ``n_boot``,
    ``seed`` and ``labels``): a job found there is not bootstrapped again. A job's figures are the same in any batch
    (each figure gets the draws it would get alone), so the result is what :func:`side_figures_many` returns; the
    key must name what the job's levels are made from (a site's records: their ids and the level)."""
    if memo is None:
        return side_figures_many(jobs, n_boot, seed, *labels)
    full = [(key, n_boot, seed, labels) for key in keys]
    found = {i: memo.pop(k) for i, k in enumerate(full) if k in memo}
    missing = [i for i in range(len(full)) if i not in found]
    found.update(zip(missing, side_figures_many([jobs[i] for i in missing], n_boot, seed, *labels), strict=True))
    for i, k in enumerate(full):
        memo[k] = found[i]  # the most recent last
    while len(memo) > SIDES_KEPT:
        del memo[next(iter(memo))]  # the least recently used
    return [found[i] for i in range(len(full))]


def side_figures(
    specs: Sequence[Figure], levels: Sequence[Level], n_boot: int, seed: int, *labels: str, draw: bool = True
) -> dict[str, SideFigure | None]:
    """Every figure of ``specs`` over these runs' levels by the rule of the module docstring (None: no run states
    it); the figures with per-request samples in every run are bootstrapped together (one resample per run)."""
    return side_figures_many([(specs, levels)], n_boot, seed, *labels, draw=draw)[0]


def side_figure(spec: Figure, levels: Sequence[Level], n_boot: int, seed: int, *labels: str) -> SideFigure | None:
    """``spec`` over these runs' levels by the rule of the module docstring; None when no run states it."""
    return side_figures([spec], levels, n_boot, seed, *labels)[spec.key]


@dataclass(frozen=True)
class Interval:
    point: float  # mean over runs
    lo: float
    hi: float
    n_runs: int
    n_requests: int | None  # requests the figure rests on
    method: Literal["requests", "runs"]
    confidence: float


INTERVAL_STREAM = "interval"
"""The stream of every interval of one side's figure (charts, :func:`bench.frame`): a record's interval is the same
wherever it is shown."""


def level_intervals_many(
    jobs: Sequence[tuple[Sequence[str], Sequence[Level]]],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Interval | None]]:
    """:func:`level_intervals` of many levels (or sets of runs' levels) at once: one bootstrap batch, one
    percentile computation. :func:`bench.frame` asks for every level of a batch of records this way."""
    usable = [[lv for lv in levels if not lv.failed] for _, levels in jobs]
    asked = [([figure(k) for k in keys], lvs) for (keys, _), lvs in zip(jobs, usable, strict=True) if lvs]
    found = iter(side_figures_many(asked, n_boot, seed, INTERVAL_STREAM))
    sides = [next(found) if lvs else dict.fromkeys(keys) for (keys, _), lvs in zip(jobs, usable, strict=True)]
    drawn = [(j, key, f, f.boot) for j, side in enumerate(sides) for key, f in side.items() if f is not None and f.boot]
    tail = (1.0 - confidence) / 2.0 * 100.0
    bounds = (  # one figure per row: each row's percentiles
        percentiles(np.stack([b.draws for *_, b in drawn]), [tail, 100.0 - tail]) if drawn else np.empty((2, 0))
    )
    out: list[dict[str, Interval | None]] = [dict.fromkeys(keys) for keys, _ in jobs]
    for c, (j, key, f, _) in enumerate(drawn):
        requests = f.requests if f.method == "requests" else None
        method: Literal["requests", "runs"] = "requests" if f.method == "requests" else "runs"
        out[j][key] = Interval(f.point, float(bounds[0, c]), float(bounds[1, c]), f.runs, requests, method, confidence)
    return out


def level_intervals(
    keys: Sequence[str],
    levels: Sequence[Level],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Interval | None]:
    """:func:`level_interval` of several figures of the same levels at once (one resample per run for all)."""
    return level_intervals_many([(keys, levels)], confidence=confidence, n_boot=n_boot, seed=seed)[0]


def level_interval(
    key: str,
    levels: Sequence[Level],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """Mean over runs of the figure ``key`` (a key of ``bench.figures``) at one level, with its bootstrap interval;
    None without one (one run without samples, a run that does not state it, or only failed levels)."""
    return level_intervals([key], levels, confidence=confidence, n_boot=n_boot, seed=seed)[key]
