"""Records → :class:`~bench.site._chart_model.Chart`: figures against concurrency, one series per record or variant.

With repeats (a record and the other runs of its configuration, ``bench.compare.runs_of``), a variant's line
is the mean over its runs and its band the bootstrap confidence interval of that mean
(``bench.compare.level_interval``: runs, then requests within each run, when the runs hold per-request
samples; runs alone otherwise). A variant with one run has no band. A failed level (``Level.failure``) is never
drawn; the chart's note names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.compare import level_intervals_many
from bench.figures import Figure, figure, format_figure
from bench.level_order import unplaced_text
from bench.record.model import Level, Record

from ._chart_model import Axis, Band, Chart, HLine, Point, Series
from ._failed_levels import failed_note

__all__ = ["PERCENTILES", "BandIntervals", "ChartLine", "concurrency_chart", "percentile_chart"]

PERCENTILES: tuple[str, ...] = ("p50", "p90", "p99")

# (series name, record, figure drawn for it)
ChartLine = tuple[str, Record, Figure]


def _x_domain(records: Sequence[Record], xs: Sequence[float]) -> tuple[float, float]:
    candidates = list(xs)
    for r in records:
        if r.workload.concurrency_range:
            candidates += [float(c) for c in r.workload.concurrency_range]
        if r.workload.planned_levels:
            candidates += [float(c) for c in r.workload.planned_levels]
    candidates = [c for c in candidates if c >= 1]
    if not candidates:
        return 1.0, 64.0
    lo, hi = min(candidates), max(candidates)
    return (lo, hi) if hi > lo else (lo, lo * 2)


BandIntervals = dict[str, dict[str, list[float] | None]]
"""Series name → level key → [point, lo, hi, runs] of its band there (None: no interval): the bootstrap's part of a
chart, which a caller may keep and give back (``concurrency_chart``'s ``intervals``)."""


def _banded(
    runs: Sequence[Record], metric: Figure, confidence: float, known: dict[str, list[float] | None]
) -> tuple[list[Point], list[Band], bool]:
    """Mean over runs at each level with a concurrency, and its interval; (points, band, any approximate). Levels
    missing from ``known`` are bootstrapped (all at once) and added to it."""
    by_key: dict[str, list[Level]] = {}
    for r in runs:
        for lv in r.levels:
            if lv.concurrency is not None and not lv.failed and metric.value(lv) is not None:
                by_key.setdefault(lv.key, []).append(lv)
    missing = [key for key, levels in by_key.items() if key not in known and len(levels) > 1]
    found = level_intervals_many([([metric.key], by_key[k]) for k in missing], confidence=confidence)
    for key, ivs in zip(missing, found, strict=True):
        iv = ivs[metric.key]
        known[key] = None if iv is None else [iv.point, iv.lo, iv.hi, float(iv.n_runs)]
    points, band, approx = [], [], False
    for key, levels in by_key.items():
        x = float(levels[0].concurrency or 0)
        stored = known.get(key) if len(levels) > 1 else None
        figs = [f for lv in levels if (f := metric.value(lv)) is not None]
        approx = approx or any(a for _, a in figs)
        if stored is not None:
            point, lo, hi, n_runs = stored
            shown = f"{format_figure(lo)}–{format_figure(hi)}"
            tip = f"mean of {int(n_runs)} runs; {confidence:.0%} interval {shown}"
            points.append(Point(x=x, y=point, tooltip=tip))
            band.append(Band(x=x, lo=lo, hi=hi))
        else:
            mean = sum(v for v, _ in figs) / len(figs)
            tip = f"mean of {len(figs)} runs, no interval" if len(figs) > 1 else ""
            points.append(Point(x=x, y=mean, approximate=any(a for _, a in figs), tooltip=tip))
    return points, band, approx


def concurrency_chart(
    lines: Sequence[ChartLine],
    *,
    title: str,
    y_title: str,
    chart_id: str = "chart",
    repeats: Mapping[str, Sequence[Record]] | None = None,
    confidence: float = 0.95,
    intervals: BandIntervals | None = None,
) -> Chart:
    """Figures against concurrency (log2 axis), one series per line.

    ``repeats``: series name → every run of that line's configuration (the line's record included). With two
    or more runs of a headline figure, the line is the mean over runs, with a confidence band where
    ``bench.compare.level_interval`` gives one. ``intervals``: the bands of an earlier call with the same lines,
    runs and confidence (not bootstrapped again); what is computed is added to it, for the caller to keep.
    """
    out: list[Series] = []
    hlines: list[HLine] = []
    any_approx = any_band = False
    for name, record, metric in lines:
        runs = list((repeats or {}).get(name, ())) or [record]
        points: list[Point] = []
        band: list[Band] = []
        pooled = len(runs) > 1 and metric.stat is None
        if pooled:  # placed levels come from every run; levels without a concurrency from the latest
            known = (intervals if intervals is not None else {}).setdefault(name, {})
            points, band, approx = _banded(runs, metric, confidence, known)
            any_approx = any_approx or approx
            any_band = any_band or bool(band)
        for level in record.levels:
            fig = metric.value(level) if not level.failed else None
            if fig is None or (pooled and level.concurrency is not None):
                continue
            value, approx = fig
            any_approx = any_approx or approx
            m = metric.metric(level)
            tip = f"n={m.n}" if m is not None and m.n is not None else ""
            if level.concurrency is None:
                shown = format_figure(value, approximate=approx)
                hlines.append(HLine(y=value, text=f"{unplaced_text(level)} ({shown} {metric.unit})", series=name))
            else:
                points.append(Point(x=float(level.concurrency), y=value, approximate=approx, tooltip=tip))
        out.append(Series(name=name, points=tuple(points), band=tuple(band)))
    xs = [p.x for s in out for p in s.points]
    notes = []
    if any_band:
        notes.append(f"shaded: {confidence:.0%} bootstrap interval of the mean over repeated runs")
    if any_approx:
        notes.append("hollow marker / ≈: approximate figure")
    if hlines:
        notes.append("dashed line: figure stated without its concurrency")
    failed = failed_note([(name, r) for name, rec, _ in lines for r in (repeats or {}).get(name, ()) or [rec]])
    if failed:
        notes.append(failed)
    return Chart(
        title=title,
        x=Axis("Concurrency", scale="log2", domain=_x_domain([r for _, r, _ in lines], xs)),
        y=Axis(y_title),
        series=tuple(out),
        hlines=tuple(hlines),
        note="; ".join(notes),
        id=chart_id,
    )


def percentile_chart(
    records: Sequence[tuple[str, Record]], field: str, *, title: str, y_title: str, chart_id: str = "chart"
) -> Chart:
    """p50/p90/p99 of a latency (``ttft_ms``, ``tpot_ms``: the figures ``ttft_p50`` ... of ``bench.figures``) against
    concurrency: one colour per variant, one dash and marker per percentile."""
    out: list[Series] = []
    hlines: list[HLine] = []
    for name, record in records:
        for k, stat in enumerate(PERCENTILES):
            spec = figure(f"{field.removesuffix('_ms')}_{stat}")
            points: list[Point] = []
            label = f"{name} {stat}"
            for level in record.levels:
                found = spec.value(level) if not level.failed else None
                if found is None:
                    continue
                v, approx = found
                if level.concurrency is None:
                    shown = format_figure(v, approximate=approx)
                    hlines.append(HLine(y=v, text=f"{unplaced_text(level)} ({shown} {spec.unit})", series=label))
                else:
                    m = spec.metric(level)
                    tip = f"n={m.n}" if m is not None and m.n is not None else ""
                    points.append(Point(x=float(level.concurrency), y=v, approximate=approx, tooltip=tip))
            if points or any(h.series == label for h in hlines):
                out.append(Series(name=label, points=tuple(points), group=name, style=k))
    xs = [p.x for s in out for p in s.points]
    notes = ["colour: variant; solid / dashed / dotted: p50 / p90 / p99"]
    if any(p.approximate for s in out for p in s.points):
        notes.append("hollow marker: approximate figure")
    failed = failed_note(records)
    if failed:
        notes.append(failed)
    return Chart(
        title=title,
        x=Axis("Concurrency", scale="log2", domain=_x_domain([r for _, r in records], xs)),
        y=Axis(y_title),
        series=tuple(out),
        hlines=tuple(hlines),
        note="; ".join(notes),
        id=chart_id,
        value_labels=False if len(xs) > 12 else None,
    )
