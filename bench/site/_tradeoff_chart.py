"""The serving trade-off chart: total throughput per GPU against per-request tok/s, with its Pareto front.

Each level that states both figures (and a concurrency) is a point, labelled ``C=<concurrency>``; a variant's
points are joined in concurrency order. Throughput is divided by ``environment.gpu.count`` when every record
on the chart states it ("per GPU"); otherwise it is shown as is ("per server") and the axis says so.

The Pareto front is the set of points no other point beats on both axes (higher is better on both): a point
is dominated when another is at least as good on both and better on one. Front points get a ring and are
joined by a dashed grey line. A failed level (``Level.failure``) is never a point, so never on the front.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.figures import figure, format_figure
from bench.record.model import Record

from ._chart_model import Axis, Chart, Point, Series
from ._failed_levels import failed_note

__all__ = ["pareto_front", "per_gpu", "tradeoff_chart"]


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points not dominated by another (higher is better on both coordinates), in input order."""
    front = []
    for i, (x, y) in enumerate(points):
        dominated = any((qx >= x and qy >= y) and (qx > x or qy > y) for j, (qx, qy) in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return front


def per_gpu(records: Sequence[Record]) -> bool:
    """True when every record states its GPU count (throughput can be shown per GPU)."""
    return bool(records) and all(r.environment.gpu.count for r in records)


def tradeoff_chart(lines: Sequence[tuple[str, Record]], *, title: str, chart_id: str = "chart") -> Chart:
    """One curve per (name, record); the Pareto front over every point on the chart is marked."""
    x_spec, y_spec = figure("per_request_tok_s"), figure("total_throughput")
    divide = per_gpu([r for _, r in lines])
    unit = "per GPU" if divide else "per server"
    raw: list[tuple[str, float, float, int, bool, str]] = []  # name, x, y, concurrency, approximate, tooltip
    for name, record in lines:
        gpus = (record.environment.gpu.count or 1) if divide else 1
        for level in sorted(
            (lv for lv in record.levels if lv.concurrency is not None and not lv.failed),
            key=lambda lv: lv.concurrency or 0,
        ):
            fx, fy = x_spec.value(level), y_spec.value(level)
            if fx is None or fy is None:
                continue
            y = fy[0] / gpus
            tip = f"total {format_figure(fy[0])} tok/s" + (f" on {gpus} GPUs" if divide and gpus > 1 else "")
            raw.append((name, fx[0], y, level.concurrency or 0, fx[1] or fy[1], tip))
    front = set(pareto_front([(x, y) for _, x, y, _, _, _ in raw]))
    series = []
    for name, _ in lines:
        pts = tuple(
            Point(
                x=x,
                y=y,
                label=f"C={c}",
                approximate=approx,
                marked=i in front,
                tooltip=f"{format_figure(y)} tok/s {unit}, {format_figure(x)} tok/s per request; {tip}"
                + ("; on the Pareto front" if i in front else ""),
            )
            for i, (n, x, y, c, approx, tip) in enumerate(raw)
            if n == name
        )
        series.append(Series(name=name, points=pts))
    front_line = tuple(sorted(((raw[i][1], raw[i][2]) for i in front), key=lambda p: p[0]))
    note = (
        "ringed points and dashed grey line: Pareto front (no other point is better on both axes); label: concurrency"
    )
    failed = failed_note(lines)
    if failed:
        note += "; " + failed
    return Chart(
        title=title,
        x=Axis("Per-request tok/s (one user's speed)"),
        y=Axis(f"Total throughput {unit} (tok/s)"),
        series=tuple(series),
        note=note,
        id=chart_id,
        connect="order",
        front=front_line,
    )
