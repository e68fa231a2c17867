"""``compare_records``: baseline runs against candidate runs, level by level (pure).

Levels are matched by concurrency; a level stated without one (``label: saturation``) is matched by label.
Each side is a sequence of records: one run, or several runs of one configuration (``bench run --repeat N``
writes N records sharing a ``run_group``); several runs give a hierarchical bootstrap (see ``bootstrap``), and
runs without per-request samples an interval over their stated figures. What each ratio shows (indicative, no
difference, decided, unresolved) is ``evidence``'s rule; which runs enter a level is ``sides``'s.

A pair whose context differs beyond the experiment's treatment is not comparable: its table is computed, but
it gets no verdict unless a cross-context comparison is forced (``cross_context=True``, ``bench compare
--cross-context``, or ``cross_context: true`` for the experiment in ``benchbook.yaml``); then it is labelled so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from bench.record.model import Level, Record
from bench.settings import Settings

from .bootstrap import BootstrapResult, RunValues, bootstrap_ratio, bootstrap_side, rng_for
from .context import context_of, fingerprint
from .envdiff import environment_diff
from .evidence import classify, level_winner
from .metrics import METRICS, MetricSpec, metric_by_name, run_values, stated_metric
from .result import Comparison, ContextWarning, ExcludedLevel, LevelComparison, MetricComparison, Ratio
from .sides import SideLevels, completed_requests, side_levels
from .verdict import level_sort_key, verdict_sentence

__all__ = ["compare_records", "context_warnings"]

INFO_PREFIXES = ("server.", "environment.", "model.", "draft_model.", "workload.")


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def context_warnings(a: Record, b: Record, treatment: Sequence[str]) -> list[ContextWarning]:
    """One warning per context field that differs between ``a`` and ``b`` and is not part of the treatment."""
    ca, cb = context_of(a), context_of(b)
    return [
        ContextWarning(k, ca.get(k), cb.get(k))
        for k in sorted(ca.keys() | cb.keys())
        if ca.get(k) != cb.get(k) and not _matches(k, treatment)
    ]


@dataclass(frozen=True)
class _Figure:
    """One side's figure at one level: the point estimate, its bootstrap (None: no interval), what it rests on."""

    point: float
    boot: BootstrapResult | None
    requests: int | None
    runs: int
    approximate: bool = False


def _pooled(levels: Sequence[Level]) -> int | None:
    counts = [completed_requests(lv) for lv in levels]
    return sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None


def _figure(spec: MetricSpec, levels: Sequence[Level], n_boot: int, seed: int, *labels: str) -> _Figure | None:
    """Per-request samples of every run (hierarchical bootstrap), else the stated figures of two or more runs
    (bootstrap over runs), else the stated figure of one run (a point estimate)."""
    runs = [run_values(spec, lv) for lv in levels]
    if levels and all(r is not None for r in runs):
        res = bootstrap_side([r for r in runs if r is not None], n_boot, rng_for(seed, spec.name, *labels))
        return _Figure(res.point, res, res.n_requests, res.n_runs)
    stated = [m for lv in levels if (m := stated_metric(spec, lv)) is not None]
    if not stated:
        return None
    values = [m.headline() for m in stated]
    approx = any(m.approximate for m in stated)
    ns = [m.n for m in stated]
    n = sum(x for x in ns if x is not None) if all(x is not None for x in ns) else _pooled(levels)
    if len(stated) >= 2 and len(stated) == len(levels):
        res = bootstrap_side([RunValues(values=values, kind="mean")], n_boot, rng_for(seed, spec.name, "runs", *labels))
        return _Figure(res.point, res, n, len(values), approx)
    return _Figure(sum(values) / len(values), None, n, len(values), approx)


def _units(spec: MetricSpec, levels: Sequence[Level]) -> set[str]:
    return {m.unit for lv in levels if (m := stated_metric(spec, lv)) is not None}


def _missing_note(spec: MetricSpec, lacking: str, present: str, levels: Sequence[Level]) -> str:
    note = f"only the {present} states it"
    if spec.counterpart is None:
        return note
    other = metric_by_name(spec.counterpart)
    if any(stated_metric(other, lv) is not None for lv in levels):
        return f"{note}; the {lacking} states {other.label} instead, a different figure that is never converted"
    return f"{note}; the {lacking} states no {spec.label}"


def _compare_metric(
    spec: MetricSpec,
    la: Sequence[Level],
    lb: Sequence[Level],
    key: str,
    settings: Settings,
    n_boot: int,
    seed: int,
) -> MetricComparison | None:
    fa = _figure(spec, la, n_boot, seed, key, "a")
    fb = _figure(spec, lb, n_boot, seed, key, "b")
    if fa is None and fb is None:
        return None

    def out(value: float | None, lo: float | None, hi: float | None, note: str | None) -> MetricComparison:
        ratio = Ratio(
            value,
            lo,
            hi,
            fa.requests if fa else None,
            fb.requests if fb else None,
            fa.runs if fa else 1,
            fb.runs if fb else 1,
        )
        return MetricComparison(
            spec.name,
            spec.label,
            spec.unit,
            spec.higher_is_better,
            fa.point if fa else None,
            fb.point if fb else None,
            ratio,
            approximate=bool((fa and fa.approximate) or (fb and fb.approximate)),
            note=note,
            evidence=classify(ratio, settings.comparison.noise_floor),
            neutral=spec.neutral,
        )

    if fa is None or fb is None:
        lacking, present, levels = ("baseline", "candidate", la) if fa is None else ("candidate", "baseline", lb)
        return out(None, None, None, _missing_note(spec, lacking, present, levels))
    units = _units(spec, la) | _units(spec, lb)
    if len(units) > 1:
        shown = " vs ".join(sorted(units))
        return out(None, None, None, f"not compared: the records state it in different units ({shown})")
    if fa.point == 0:
        return out(None, None, None, "no ratio: the baseline figure is zero")
    value = fb.point / fa.point
    if fa.boot is None or fb.boot is None:
        missing = " and ".join(side for side, f in (("baseline", fa), ("candidate", fb)) if f.boot is None)
        note = f"point estimate, no interval: the {missing} records hold no per-request samples and no repeated runs"
        return out(value, None, None, note)
    interval = bootstrap_ratio(fa.boot, fb.boot, settings.comparison.confidence)
    if interval is None:
        return out(value, None, None, "point estimate, no interval: a resampled baseline figure is zero")
    return out(value, interval[1], interval[2], None)


def _levels_by_key(records: Sequence[Record]) -> dict[str, list[Level]]:
    out: dict[str, list[Level]] = {}
    for r in records:
        for lv in r.levels:
            out.setdefault(lv.key, []).append(lv)
    return out


def _label(records: Sequence[Record], other: Sequence[Record], tag: str) -> str:
    variant = records[0].variant
    return f"{variant} [{tag}]" if variant == other[0].variant else variant


def _side_notes(baseline: Sequence[Record], candidate: Sequence[Record], treatment: Sequence[str]) -> list[str]:
    a0, b0 = baseline[0], candidate[0]
    notes: list[str] = []
    if a0.experiment != b0.experiment:
        notes.append(f"the records come from different experiments ({a0.experiment}, {b0.experiment})")
    for side, runs in (("baseline", baseline), ("candidate", candidate)):
        for r in runs[1:]:
            diffs = context_warnings(runs[0], r, ())
            if diffs or r.variant != runs[0].variant:
                fields = ", ".join(d.field for d in diffs) or "variant"
                notes.append(f"the {side} runs are not one configuration: {r.id} differs in {fields}")
    ca, cb = context_of(a0), context_of(b0)
    unstated = [k for k in sorted(ca) if ca[k] is None and cb.get(k) is None and not _matches(k, treatment)]
    if unstated:
        notes.append("neither side states " + ", ".join(unstated) + ": the comparison cannot check them")
    return notes


def _level_row(
    first: Level,
    sa: SideLevels,
    sb: SideLevels,
    settings: Settings,
    n_boot: int,
    seed: int,
    verdict_allowed: bool,
) -> LevelComparison:
    reasons = [f"{side}: {s.reason}" for side, s in (("baseline", sa), ("candidate", sb)) if s.reason]
    reason = "; ".join(reasons) or None
    metrics: tuple[MetricComparison, ...] = ()
    if not (sa.failed or sb.failed):
        metrics = tuple(
            m
            for spec in METRICS
            if (m := _compare_metric(spec, sa.levels, sb.levels, first.key, settings, n_boot, seed)) is not None
        )
    winner = level_winner(metrics) if reason is None and verdict_allowed else "none"
    return LevelComparison(
        first.key,
        first.concurrency,
        first.label,
        metrics,
        winner,
        reason,
        failed=sa.failed or sb.failed,
    )


def compare_records(
    baseline: Sequence[Record],
    candidate: Sequence[Record],
    *,
    settings: Settings | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    cross_context: bool | None = None,
) -> Comparison:
    """Compare candidate runs with baseline runs (ratio = candidate / baseline) at every shared level.

    Each side should be one configuration: its records' contexts are checked against each other too.
    ``cross_context`` forces a verdict for a pair that differs in context (None: the experiment's setting).
    """
    if not baseline or not candidate:
        raise ValueError("compare_records needs at least one baseline and one candidate record")
    settings = settings or Settings()
    cs = settings.comparison
    a0, b0 = baseline[0], candidate[0]
    experiment = a0.experiment if a0.experiment == b0.experiment else None
    treatment = settings.treatment_for(experiment)
    forced = settings.cross_context_for(experiment) if cross_context is None else cross_context
    warnings = context_warnings(a0, b0, treatment)
    notes = _side_notes(baseline, candidate, treatment)

    levels_a, levels_b = _levels_by_key(baseline), _levels_by_key(candidate)
    shared = sorted(levels_a.keys() & levels_b.keys(), key=lambda k: level_sort_key(levels_a[k][0]))
    rows: list[LevelComparison] = []
    excluded: list[ExcludedLevel] = []
    for key in shared:
        sa, sb = side_levels(levels_a[key], cs.min_requests), side_levels(levels_b[key], cs.min_requests)
        row = _level_row(levels_a[key][0], sa, sb, settings, n_boot, seed, verdict_allowed=not warnings or forced)
        rows.append(row)
        if row.excluded:
            excluded.append(ExcludedLevel(key, row.excluded, row.name))
        for side, s in (("baseline", sa), ("candidate", sb)):
            if s.dropped:
                notes.append(f"{row.name}: {side}: {s.dropped}; its other runs are compared")

    with_ratio = [m for row in rows for m in row.metrics if m.ratio.value is not None]
    has_iv = {m.ratio.has_interval for m in with_ratio}
    estimate: Literal["bootstrap", "point", "mixed"] = (
        "bootstrap" if has_iv == {True} else "point" if has_iv <= {False} else "mixed"
    )
    label_a, label_b = _label(baseline, candidate, "A"), _label(candidate, baseline, "B")
    info = tuple(d for d in environment_diff(a0, b0) if d.role == "info" and d.field.startswith(INFO_PREFIXES))
    return Comparison(
        label_a=label_a,
        label_b=label_b,
        ids_a=tuple(r.id for r in baseline),
        ids_b=tuple(r.id for r in candidate),
        fingerprint_a=fingerprint(a0),
        fingerprint_b=fingerprint(b0),
        experiment=experiment,
        treatment=tuple(treatment),
        levels=tuple(rows),
        warnings=tuple(warnings),
        verdict=verdict_sentence(
            rows,
            label_a,
            label_b,
            confidence=cs.confidence,
            noise_floor=cs.noise_floor,
            context=warnings,
            cross_context=forced,
        ),
        excluded=tuple(excluded),
        notes=tuple(notes),
        info_differences=info,
        confidence=cs.confidence,
        n_boot=n_boot,
        seed=seed,
        estimate=estimate,
        only_in_a=tuple(sorted(levels_a.keys() - levels_b.keys(), key=lambda k: level_sort_key(levels_a[k][0]))),
        only_in_b=tuple(sorted(levels_b.keys() - levels_a.keys(), key=lambda k: level_sort_key(levels_b[k][0]))),
        cross_context=bool(warnings) and forced,
        noise_floor=cs.noise_floor,
        min_requests=cs.min_requests,
    )
