"""How far repeated runs of one configuration land apart: the evidence behind ``comparison.noise_floor`` (pure).

Repeated runs are records sharing a ``run_group``, variant and fingerprint (``bench run --repeat N``). For each
level they all state (failed levels left out) and each speed figure, the *spread* is max / min − 1 over the
runs' headline figures. A difference between two configurations smaller than the typical spread between runs
of the SAME configuration is not evidence of anything; the methodology page renders these spreads from the
shipped records to justify the default noise floor.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bench.figures import SPEED, figure
from bench.level_order import level_name, level_sort_key
from bench.record.model import Level, Record

from ._context import fingerprint

__all__ = ["RepeatSpread", "SpreadSummary", "group_spreads", "repeat_groups", "repeat_spreads", "spread_summary"]


@dataclass(frozen=True)
class RepeatSpread:
    experiment: str
    variant: str
    run_group: str
    level: str  # C=8, or the label
    metric: str
    figures: tuple[float, ...]  # one headline figure per run

    @property
    def spread(self) -> float:
        return max(self.figures) / min(self.figures) - 1.0


@dataclass(frozen=True)
class SpreadSummary:
    n: int  # level x figure pairs
    configurations: int
    median: float
    q25: float
    q75: float
    smallest: float
    largest: float


def repeat_groups(
    records: Iterable[Record], *, fingerprint_of: Callable[[Record], str] = fingerprint
) -> list[list[Record]]:
    """The repeated runs: records sharing a ``run_group``, variant and fingerprint, two or more, each group in the
    records' order, the groups in the order of those three."""
    groups: dict[tuple[str, str, str], list[Record]] = {}
    for r in records:
        if r.run_group is not None:
            groups.setdefault((r.run_group, r.variant, fingerprint_of(r)), []).append(r)
    return [runs for _, runs in sorted(groups.items()) if len(runs) >= 2]


def group_spreads(runs: Sequence[Record], metrics: Sequence[str] = SPEED) -> list[RepeatSpread]:
    """One spread per level and speed figure that every run of one group (:func:`repeat_groups`) states."""
    out: list[RepeatSpread] = []
    keys = {lv.key: lv for lv in runs[0].levels if not lv.failed}
    # each run's first level of each key that did not fail (as a search of its levels in order finds it)
    kept = [_first_levels(r) for r in runs]
    for key, first in sorted(keys.items(), key=lambda kv: level_sort_key(kv[1])):
        for name in metrics:
            spec = figure(name)
            figures = []
            for levels in kept:
                lv = levels.get(key)
                found = spec.value(lv) if lv is not None else None
                if found is not None and found[0] > 0:
                    figures.append(found[0])
            if len(figures) == len(runs):
                out.append(
                    RepeatSpread(
                        runs[0].experiment,
                        runs[0].variant,
                        str(runs[0].run_group),
                        level_name(first),
                        name,
                        tuple(figures),
                    )
                )
    return out


def repeat_spreads(
    records: Iterable[Record],
    metrics: Sequence[str] = SPEED,
    *,
    fingerprint_of: Callable[[Record], str] = fingerprint,
) -> list[RepeatSpread]:
    """One spread per (configuration with two or more runs, level, speed figure) that every run states
    (``fingerprint_of``: the records' fingerprints, e.g. memoised)."""
    return [s for runs in repeat_groups(records, fingerprint_of=fingerprint_of) for s in group_spreads(runs, metrics)]


def _first_levels(record: Record) -> dict[str, Level]:
    out: dict[str, Level] = {}
    for lv in record.levels:
        if not lv.failed:
            out.setdefault(lv.key, lv)
    return out


def spread_summary(spreads: Sequence[RepeatSpread]) -> SpreadSummary | None:
    if not spreads:
        return None
    xs = sorted(s.spread for s in spreads)
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return SpreadSummary(
        n=len(xs),
        configurations=len({(s.run_group, s.variant) for s in spreads}),
        median=statistics.median(xs),
        q25=q[0],
        q75=q[2],
        smallest=xs[0],
        largest=xs[-1],
    )
