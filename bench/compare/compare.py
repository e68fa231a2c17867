"""``compare_records``: baseline runs against candidate runs, level by level (pure).

Levels are matched by concurrency; a level stated without one (``label: saturation``) is matched by label.
Each side is a sequence of records: one run, or several runs of one configuration (``bench run --repeat N``
writes N records sharing a ``run_group``); several runs give a hierarchical bootstrap (see ``bootstrap``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Literal

from bench.record.model import Level, Record

from .bootstrap import BootstrapResult, bootstrap_ratio, bootstrap_side, rng_for
from .context import context_of, fingerprint
from .envdiff import environment_diff
from .metrics import METRICS, SPEED_METRICS, MetricSpec, run_values, stated_metric
from .result import (
    Comparison,
    ContextWarning,
    ExcludedLevel,
    LevelComparison,
    MetricComparison,
    Ratio,
    Winner,
)
from .settings import Settings
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


def _unusable(level: Level, min_completed: int) -> str | None:
    if level.errors is not None and level.errors.flagged:
        rate = level.errors.error_rate
        return "error rate flagged" + (f" ({rate:.0%})" if rate is not None else "")
    completed = level.requests_completed
    if completed is None and level.samples is not None:
        completed = len(level.samples.ttft_ms)
    if completed is not None and completed < min_completed:
        return f"only {completed} completed requests (fewer than {min_completed})"
    return None


def _side_levels(levels: list[Level], min_completed: int) -> tuple[list[Level], str | None]:
    usable = [lv for lv in levels if _unusable(lv, min_completed) is None]
    if usable:
        return usable, None
    return levels, "; ".join(sorted({r for lv in levels if (r := _unusable(lv, min_completed))}))


def _point(spec: MetricSpec, levels: list[Level]) -> tuple[float | None, int | None, int, bool]:
    """Mean over runs of the stated figure: (value, samples it rests on or None, runs, approximate)."""
    figures = [m for lv in levels if (m := stated_metric(spec, lv)) is not None]
    if not figures:
        return None, None, 0, False
    value = sum(m.headline() for m in figures) / len(figures)
    ns = [m.n for m in figures]
    n = sum(x for x in ns if x is not None) if all(x is not None for x in ns) else None
    return value, n, len(figures), any(m.approximate for m in figures)


def _boot(spec: MetricSpec, levels: list[Level], n_boot: int, seed: int, *labels: str) -> BootstrapResult | None:
    runs = [rv for lv in levels if (rv := run_values(spec, lv)) is not None]
    if not runs or len(runs) != len(levels):
        return None
    return bootstrap_side(runs, n_boot, rng_for(seed, spec.name, *labels))


def _compare_metric(
    spec: MetricSpec, la: list[Level], lb: list[Level], key: str, n_boot: int, seed: int, confidence: float
) -> MetricComparison | None:
    ba = _boot(spec, la, n_boot, seed, key, "a")
    bb = _boot(spec, lb, n_boot, seed, key, "b")
    if ba is not None and bb is not None:
        ratio = bootstrap_ratio(ba, bb, confidence)
        value, lo, hi = ratio if ratio is not None else (None, None, None)
        return MetricComparison(
            spec.name,
            spec.label,
            spec.unit,
            spec.higher_is_better,
            ba.point,
            bb.point,
            Ratio(value, lo, hi, ba.n_requests, bb.n_requests, ba.n_runs, bb.n_runs),
            neutral=spec.neutral,
        )
    va, na, ra, xa = _point(spec, la) if ba is None else (ba.point, ba.n_requests, ba.n_runs, False)
    vb, nb, rb, xb = _point(spec, lb) if bb is None else (bb.point, bb.n_requests, bb.n_runs, False)
    if va is None and vb is None:
        return None
    if va is None or vb is None:
        note = f"only the {'baseline' if vb is None else 'candidate'} states it"
    else:
        missing = [side for side, b in (("baseline", ba), ("candidate", bb)) if b is None]
        note = f"point estimate, no interval: the {' and '.join(missing)} records hold no per-request samples"
    value = vb / va if va is not None and vb is not None and va != 0 else None
    return MetricComparison(
        spec.name,
        spec.label,
        spec.unit,
        spec.higher_is_better,
        va,
        vb,
        Ratio(value, None, None, na, nb, max(ra, 1), max(rb, 1)),
        approximate=xa or xb,
        note=note,
        neutral=spec.neutral,
    )


def _winner(metrics: Sequence[MetricComparison]) -> Winner:
    speed = [m for m in metrics if m.metric in SPEED_METRICS and m.ratio.value is not None]
    if not speed:
        return "none"
    leaders = {m.leader for m in speed if not m.unresolved and m.leader is not None}
    if not leaders:
        return "unresolved"
    if len(leaders) > 1:
        return "mixed"
    return leaders.pop()


def _levels_by_key(records: Sequence[Record]) -> dict[str, list[Level]]:
    out: dict[str, list[Level]] = {}
    for r in records:
        for lv in r.levels:
            out.setdefault(lv.key, []).append(lv)
    return out


def _label(records: Sequence[Record], other: Sequence[Record], tag: str) -> str:
    variant = records[0].variant
    return f"{variant} [{tag}]" if variant == other[0].variant else variant


def compare_records(
    baseline: Sequence[Record],
    candidate: Sequence[Record],
    *,
    settings: Settings | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare candidate runs with baseline runs (ratio = candidate / baseline) at every shared level.

    Each side should be one configuration: its records' contexts are checked against each other too.
    """
    if not baseline or not candidate:
        raise ValueError("compare_records needs at least one baseline and one candidate record")
    settings = settings or Settings()
    min_completed = settings.comparison.min_completed
    confidence = settings.comparison.confidence
    a0, b0 = baseline[0], candidate[0]
    experiment = a0.experiment if a0.experiment == b0.experiment else None
    treatment = settings.treatment_for(experiment)

    notes: list[str] = []
    if experiment is None:
        notes.append(f"the records come from different experiments ({a0.experiment}, {b0.experiment})")
    for side, runs in (("baseline", baseline), ("candidate", candidate)):
        for r in runs[1:]:
            diffs = context_warnings(runs[0], r, ())
            if diffs or r.variant != runs[0].variant:
                fields = ", ".join(d.field for d in diffs) or "variant"
                notes.append(f"the {side} runs are not one configuration: {r.id} differs in {fields}")
    warnings = context_warnings(a0, b0, treatment)
    ca, cb = context_of(a0), context_of(b0)
    unstated = [k for k in sorted(ca) if ca[k] is None and cb.get(k) is None and not _matches(k, treatment)]
    if unstated:
        notes.append("neither side states " + ", ".join(unstated) + ": the comparison cannot check them")

    levels_a, levels_b = _levels_by_key(baseline), _levels_by_key(candidate)
    shared = sorted(levels_a.keys() & levels_b.keys(), key=lambda k: level_sort_key(levels_a[k][0]))
    rows: list[LevelComparison] = []
    excluded: list[ExcludedLevel] = []
    for key in shared:
        la, why_a = _side_levels(levels_a[key], min_completed)
        lb, why_b = _side_levels(levels_b[key], min_completed)
        reasons = [f"{side}: {why}" for side, why in (("baseline", why_a), ("candidate", why_b)) if why]
        reason = "; ".join(reasons) or None
        metrics = tuple(
            m for spec in METRICS if (m := _compare_metric(spec, la, lb, key, n_boot, seed, confidence)) is not None
        )
        first = la[0]
        rows.append(
            LevelComparison(
                key, first.concurrency, first.label, metrics, _winner(metrics) if not reason else "none", reason
            )
        )
        if reason:
            excluded.append(ExcludedLevel(key, reason))

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
        verdict=verdict_sentence(rows, label_a, label_b, estimate=estimate, confidence=confidence),
        excluded=tuple(excluded),
        notes=tuple(notes),
        info_differences=info,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        estimate=estimate,
        only_in_a=tuple(sorted(levels_a.keys() - levels_b.keys(), key=lambda k: level_sort_key(levels_a[k][0]))),
        only_in_b=tuple(sorted(levels_b.keys() - levels_a.keys(), key=lambda k: level_sort_key(levels_b[k][0]))),
    )
