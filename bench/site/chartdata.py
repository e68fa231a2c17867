"""Records → :class:`~bench.site.charts.Chart`: figures against concurrency, one series per record."""

from __future__ import annotations

from collections.abc import Sequence

from bench.record.model import Level, Record

from .charts import Axis, Chart, HLine, Point, Series
from .fmt import fmt_number
from .metrics import MetricSpec

__all__ = ["ChartLine", "concurrency_chart", "unplaced_text"]

# (series name, record, figure drawn for it)
ChartLine = tuple[str, Record, MetricSpec]


def unplaced_text(level: Level) -> str:
    """How a level without a concurrency is described: never given an invented x."""
    if (level.label or "").lower() == "saturation":
        return "at saturation, concurrency not stated"
    return f"{level.label}, concurrency not stated"


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


def concurrency_chart(lines: Sequence[ChartLine], *, title: str, y_title: str, chart_id: str = "chart") -> Chart:
    """Figures against concurrency (log2 axis), one series per line."""
    out: list[Series] = []
    hlines: list[HLine] = []
    any_approx = False
    for name, record, metric in lines:
        points: list[Point] = []
        for level in record.levels:
            fig = metric.figure(level)
            if fig is None:
                continue
            value, approx = fig
            any_approx = any_approx or approx
            m = metric.metric(level)
            tip = f"n={m.n}" if m is not None and m.n is not None else ""
            if level.concurrency is None:
                shown = ("≈" if approx else "") + fmt_number(value)
                hlines.append(HLine(y=value, text=f"{unplaced_text(level)} ({shown} {metric.unit})", series=name))
            else:
                points.append(Point(x=float(level.concurrency), y=value, approximate=approx, tooltip=tip))
        out.append(Series(name=name, points=tuple(points)))
    xs = [p.x for s in out for p in s.points]
    notes = []
    if any_approx:
        notes.append("hollow marker / ≈: approximate figure")
    if hlines:
        notes.append("dashed line: figure stated without its concurrency")
    return Chart(
        title=title,
        x=Axis("Concurrency", scale="log2", domain=_x_domain([r for _, r, _ in lines], xs)),
        y=Axis(y_title),
        series=tuple(out),
        hlines=tuple(hlines),
        note="; ".join(notes),
        id=chart_id,
    )
