"""A comparison as a chart (pure): the ratio candidate / baseline of each speed figure against concurrency, its
confidence interval as a band, the noise floor shaded around 1. A level stated without a concurrency is a dashed
line, never a point at an invented x; a level left out of the verdict (failed, too few requests, a flagged error
rate) is not drawn."""

from __future__ import annotations

from collections.abc import Sequence

from bench.compare import Comparison, floor_text
from bench.figures import figure
from bench.level_order import unplaced_text

from ._chart_model import Axis, Band, Chart, HLine, Point, Series, Zone

__all__ = ["ratio_chart"]


def ratio_chart(c: Comparison, figures: Sequence[str], *, chart_id: str) -> Chart:
    """One series per figure key in ``figures``: its ratio at each usable level, with its interval as a band."""
    series: list[Series] = []
    hlines: list[HLine] = []
    for key in figures:
        name = figure(key).heading
        points, band = [], []
        for lv in c.levels:
            m = lv.metric(key)
            if lv.excluded or m is None or m.ratio.value is None:
                continue
            r, value = m.ratio, m.ratio.value
            interval = f"{r.lo:.2f}–{r.hi:.2f}" if r.lo is not None and r.hi is not None else "no interval"
            if lv.concurrency is None:
                hlines.append(HLine(y=value, text=f"{unplaced_text(lv)} ({value:.2f}×, {interval})", series=name))
                continue
            tip = f"{c.confidence:.0%} interval {interval}; {m.evidence.replace('_', ' ')}"
            points.append(Point(x=float(lv.concurrency), y=value, label=f"{value:.2f}×", tooltip=tip))
            if r.lo is not None and r.hi is not None:
                band.append(Band(x=float(lv.concurrency), lo=r.lo, hi=r.hi))
        if points or any(h.series == name for h in hlines):
            series.append(Series(name=name, points=tuple(points), band=tuple(band)))
    xs = [p.x for s in series for p in s.points]
    floor = c.noise_floor
    zones = (Zone(1.0 - floor, 1.0 + floor, f"noise floor {floor_text(floor)}"),) if floor > 0 else ()
    notes = [f"shaded: {c.confidence:.0%} bootstrap interval of each ratio; above 1: {c.label_b} is higher"]
    if c.excluded:
        notes.append("levels left out of the verdict are not drawn")
    return Chart(
        title=f"{c.label_b} / {c.label_a}, by concurrency",
        x=Axis(
            "Concurrency", scale="log2", domain=(min(xs), max(xs) if max(xs) > min(xs) else min(xs) * 2) if xs else None
        ),
        y=Axis(f"{c.label_b} / {c.label_a}", zero=False),
        series=tuple(series),
        hlines=tuple(hlines),
        zones=(*zones, Zone(1.0, 1.0, "no difference")),
        note="; ".join(notes),
        id=chart_id,
    )
