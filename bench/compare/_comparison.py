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
from fnmatch import fnmatchcase
from typing import Any

from bench.figures import COMPARED, Figure, figure
from bench.level_order import level_sort_key
from bench.record.model import Level, Record
from bench.settings import Settings

from ._bootstrap import bootstrap_ratio
from ._context import context_of, fingerprint
from ._envdiff import environment_diff
from ._evidence import classify, estimate_of, level_winner
from ._interval import SideFigure, SideMemo, side_figures, side_figures_kept
from ._result import Comparison, ContextWarning, ExcludedLevel, LevelComparison, MetricComparison, Ratio
from ._sides import SideLevels, side_levels
from ._verdict import verdict_sentence

__all__ = ["RatioIntervals", "compare_records", "context_warnings"]

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


def _units(spec: Figure, levels: Sequence[Level]) -> set[str]:
    return {m.unit for lv in levels if (m := spec.metric(lv)) is not None}


def _missing_note(spec: Figure, lacking: str, present: str, levels: Sequence[Level]) -> str:
    note = f"only the {present} states it"
    if spec.counterpart is None:
        return note
    other = figure(spec.counterpart)
    if any(other.metric(lv) is not None for lv in levels):
        return f"{note}; the {lacking} states {other.label} instead, a different figure that is never converted"
    return f"{note}; the {lacking} states no {spec.label}"


class _NotKnown(Exception):
    """Intervals given for a level lack a figure: the level is bootstrapped after all."""


KeptLevel = dict[str, dict[str, list[Any] | None]]
RatioIntervals = dict[str, KeptLevel]
"""Level key → what the bootstrap and the per-request values gave that level of a comparison, kept so that the
same comparison need not compute them again (``compare_records``): ``"ratios"``: figure key → the ratio's interval
[lo, hi] (None: a resampled baseline figure is zero); ``"a"``/``"b"``: figure key → that side's figure as
[point, requests, runs, method, approximate] (None: the side does not state it)."""


def _kept_side(f: SideFigure | None) -> list[Any] | None:
    return None if f is None else [f.point, f.requests, f.runs, f.method, f.approximate]


def _side_of(kept: list[Any] | None) -> SideFigure | None:
    if kept is None:
        return None
    point, requests, runs, method, approximate = kept
    return SideFigure(float(point), None, requests, int(runs), method, bool(approximate))


Sides = tuple[dict[str, SideFigure | None], dict[str, SideFigure | None]]


def _sides(known: KeptLevel | None, sa: SideLevels, sb: SideLevels, n_boot: int, seed: int) -> Sides:
    """Both sides' figures: as kept when ``known`` holds every compared figure of both, else computed (with their
    bootstrap when nothing is known). The sides draw on their own streams ("a", "b"): independent draws."""
    keys = {spec.key for spec in COMPARED}
    if known is not None and all(keys <= set(known.get(side, {})) for side in ("a", "b")):
        return (
            {k: _side_of(known["a"][k]) for k in keys},
            {k: _side_of(known["b"][k]) for k in keys},
        )
    draw = known is None
    return (
        side_figures(COMPARED, sa.levels, n_boot, seed, "a", draw=draw),
        side_figures(COMPARED, sb.levels, n_boot, seed, "b", draw=draw),
    )


def _compare_metric(
    spec: Figure,
    la: Sequence[Level],
    lb: Sequence[Level],
    fa: SideFigure | None,
    fb: SideFigure | None,
    settings: Settings,
    known: dict[str, list[Any] | None],
) -> MetricComparison | None:
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
            spec,
            fa.point if fa else None,
            fb.point if fb else None,
            ratio,
            approximate=bool((fa and fa.approximate) or (fb and fb.approximate)),
            note=note,
            evidence=classify(ratio, settings.comparison.noise_floor),
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
    if fa.method == "point" or fb.method == "point":
        missing = " and ".join(side for side, f in (("baseline", fa), ("candidate", fb)) if f.method == "point")
        note = f"point estimate, no interval: the {missing} records hold no per-request samples and no repeated runs"
        return out(value, None, None, note)
    if spec.key not in known:
        if fa.boot is None or fb.boot is None:
            raise _NotKnown(spec.key)
        found = bootstrap_ratio(fa.boot, fb.boot, settings.comparison.confidence)
        known[spec.key] = None if found is None else [found[1], found[2]]
    interval = known[spec.key]
    if interval is None:
        return out(value, None, None, "point estimate, no interval: a resampled baseline figure is zero")
    return out(value, interval[0], interval[1], None)


def _levels_by_key(records: Sequence[Record]) -> dict[str, list[Level]]:
    out: dict[str, list[Level]] = {}
    for r in records:
        for lv in r.levels:
            out.setdefault(lv.key, []).append(lv)
    return out


def _label(records: Sequence[Record], other: Sequence[Record], tag: str) -> str:
    variant = records[0].variant
    return f"{variant} [{tag}]" if variant == other[0].variant else variant


CAPACITY_RATIO = 1.5
"""KV-cache pools further apart than this (larger / smaller) are named in a comparison's notes."""


def _reported(record: Record, name: str) -> Any:
    observed = record.server.observed
    return observed.extra.get(name) if observed is not None else None


def capacity_notes(a: Record, b: Record) -> list[str]:
    """What the servers reported about their capacity, where it differs enough to shape the figures: the KV-cache
    pool (SGLang's ``max_total_num_tokens``) and the admission limit (``max_running_requests``). Neither is a
    setting the config states (SGLang sizes the pool from the memory free when it starts), so two records of one
    configuration can differ here; the comparison names it rather than calling the records incomparable."""
    notes: list[str] = []
    pa, pb = _reported(a, "max_total_num_tokens"), _reported(b, "max_total_num_tokens")
    if isinstance(pa, int) and isinstance(pb, int) and min(pa, pb) > 0 and max(pa, pb) / min(pa, pb) > CAPACITY_RATIO:
        notes.append(
            f"the servers reported KV-cache pools of {pa:,} ({a.variant}) and {pb:,} ({b.variant}) tokens "
            f"(server.observed.extra.max_total_num_tokens), {max(pa, pb) / min(pa, pb):.1f}x apart: levels that "
            "need more than the smaller pool queue or retract on that side only"
        )
    ra, rb = _reported(a, "max_running_requests"), _reported(b, "max_running_requests")
    if ra != rb and (isinstance(ra, int) or isinstance(rb, int)):
        limits = [
            f"{v} ({r.variant})" if isinstance(v, int) else f"none stated ({r.variant})" for v, r in ((ra, a), (rb, b))
        ]
        lowest = min(v for v in (ra, rb) if isinstance(v, int))
        notes.append(
            f"the servers' limits on running requests differ: {limits[0]} and {limits[1]} "
            f"(server.observed.extra.max_running_requests): above {lowest} concurrent requests the extra ones "
            "wait in a queue on the limited side"
        )
    return notes


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
    return notes + capacity_notes(a0, b0)


def _level_metrics(
    sa: SideLevels,
    sb: SideLevels,
    settings: Settings,
    n_boot: int,
    seed: int,
    known: KeptLevel | None,
    drawn: Sides | None = None,
) -> tuple[KeptLevel, tuple[MetricComparison, ...]]:
    """The compared figures of one level, and what to keep of them (see :data:`RatioIntervals`); each side's
    figures in one bootstrap (``drawn``: done already), none when the level is ``known``."""
    ratios: dict[str, list[Any] | None] = dict(known.get("ratios", {})) if known is not None else {}
    fa, fb = drawn if drawn is not None and known is None else _sides(known, sa, sb, n_boot, seed)
    metrics = tuple(
        m
        for spec in COMPARED
        if (m := _compare_metric(spec, sa.levels, sb.levels, fa[spec.key], fb[spec.key], settings, ratios)) is not None
    )
    kept: KeptLevel = {
        "ratios": ratios,
        "a": {k: _kept_side(f) for k, f in fa.items()},
        "b": {k: _kept_side(f) for k, f in fb.items()},
    }
    return kept, metrics


def _level_row(
    first: Level,
    sa: SideLevels,
    sb: SideLevels,
    settings: Settings,
    n_boot: int,
    seed: int,
    verdict_allowed: bool,
    known: KeptLevel | None,
    drawn: Sides | None = None,
) -> tuple[LevelComparison, KeptLevel]:
    reasons = [f"{side}: {s.reason}" for side, s in (("baseline", sa), ("candidate", sb)) if s.reason]
    reason = "; ".join(reasons) or None
    metrics: tuple[MetricComparison, ...] = ()
    found: KeptLevel = {}
    if not (sa.failed or sb.failed):
        try:
            found, metrics = _level_metrics(sa, sb, settings, n_boot, seed, known, drawn)
        except _NotKnown:
            found, metrics = _level_metrics(sa, sb, settings, n_boot, seed, None)
    winner = level_winner(metrics) if reason is None and verdict_allowed else "none"
    row = LevelComparison(
        first.key,
        first.concurrency,
        first.label,
        metrics,
        winner,
        reason,
        failed=sa.failed or sb.failed,
    )
    return row, found


def compare_records(
    baseline: Sequence[Record],
    candidate: Sequence[Record],
    *,
    settings: Settings | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    cross_context: bool | None = None,
    ratio_intervals: RatioIntervals | None = None,
    side_memo: SideMemo | None = None,
) -> Comparison:
    """Compare candidate runs with baseline runs (ratio = candidate / baseline) at every shared level.

    Each side should be one configuration: its records' contexts are checked against each other too.
    ``cross_context`` forces a verdict for a pair that differs in context (None: the experiment's setting).
    ``ratio_intervals``: the bootstrap's intervals of an earlier call with the same records, settings, ``n_boot``
    and ``seed``; a level found there is not bootstrapped again, and a level computed is added to it (so a caller
    can keep it: the site's cache does). ``side_memo``: each side's bootstrapped figures, kept across the calls of one
    caller whose records do not change under their ids (the site: a baseline meets every other variant).
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
    sides = {k: (side_levels(levels_a[k], cs.min_requests), side_levels(levels_b[k], cs.min_requests)) for k in shared}
    # every level still to bootstrap, each side in one batch (the same draws as level by level, computed at once)
    fresh = [k for k in shared if not (sides[k][0].failed or sides[k][1].failed) and k not in (ratio_intervals or {})]
    ids_a, ids_b = tuple(r.id for r in baseline), tuple(r.id for r in candidate)
    jobs_a, jobs_b = [(COMPARED, sides[k][0].levels) for k in fresh], [(COMPARED, sides[k][1].levels) for k in fresh]
    mr = cs.min_requests
    drawn_a = side_figures_kept(jobs_a, [(ids_a, mr, k) for k in fresh], side_memo, n_boot, seed, "a")
    drawn_b = side_figures_kept(jobs_b, [(ids_b, mr, k) for k in fresh], side_memo, n_boot, seed, "b")
    drawn = dict(zip(fresh, zip(drawn_a, drawn_b, strict=True), strict=True))
    for key in shared:
        sa, sb = sides[key]
        known = ratio_intervals.get(key) if ratio_intervals is not None else None
        row, found = _level_row(
            levels_a[key][0],
            sa,
            sb,
            settings,
            n_boot,
            seed,
            verdict_allowed=not warnings or forced,
            known=known,
            drawn=drawn.get(key),
        )
        if ratio_intervals is not None:
            ratio_intervals[key] = found
        rows.append(row)
        if row.excluded:
            excluded.append(ExcludedLevel(key, row.excluded, row.name))
        for side, s in (("baseline", sa), ("candidate", sb)):
            if s.dropped:
                notes.append(f"{row.name}: {side}: {s.dropped}; its other runs are compared")

    estimate = estimate_of(rows)
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
