"""Static, self-contained SVG line charts: no JavaScript needed, readable without hovering.

A chart is described by data (:class:`Chart`: axes, series of points, horizontal reference lines)
and drawn by :func:`render_svg`. Nothing here knows about records: :mod:`bench.site.chartdata`
turns records into charts. New chart kinds (confidence bands, Pareto fronts, percentile charts)
are new ``Chart`` builders, or new optional fields drawn by one more ``_draw_*`` step.

Every point carries a ``<title>`` tooltip *and* (when there is room) a visible value label; the
x axis may be log2 (concurrency); a figure that has no x (e.g. "at saturation, concurrency not
stated") is a :class:`HLine`, drawn dashed across the plot and labelled, never placed at an
invented x.

A series may carry a confidence band (:class:`Band`, drawn as a shaded area behind its line), series may
share a colour (``group``: one colour per variant, dash per percentile), points may be joined in the order
given rather than by x (``Chart.connect``, for trade-off curves whose x is not concurrency), and marked
points (``Point.marked``) get a ring, with ``Chart.front`` drawn as a dashed grey line (a Pareto front).
Each legend entry and the elements of its series share a ``data-series`` attribute, so a page script may
toggle a series (``docs/assets/js/bench-charts.js``); without the script nothing is hidden.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .escape import html_attr, html_text
from .fmt import fmt_number

__all__ = ["PALETTE", "Axis", "Band", "Chart", "HLine", "Point", "Series", "render_svg"]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("circle", "square", "triangle", "diamond")
DASHES = ("", "6 3", "2 3", "8 3 2 3")

WIDTH, HEIGHT = 720, 400
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 72, 24, 56, 56
X_PAD = 18  # points at the ends of a log axis stay clear of the y axis


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str = ""  # shown as the value label; defaults to the y figure
    tooltip: str = ""  # extra text for the <title>
    approximate: bool = False
    marked: bool = False  # drawn with a ring (e.g. on the Pareto front)


@dataclass(frozen=True)
class Band:
    """A confidence interval at one x: the band of a series joins these, shaded."""

    x: float
    lo: float
    hi: float


@dataclass(frozen=True)
class HLine:
    """A figure with no x position: drawn dashed across the plot with its text."""

    y: float
    text: str
    series: str  # name of the series whose colour it takes


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[Point, ...] = ()
    band: tuple[Band, ...] = ()
    group: str | None = None  # series of one group share a colour (default: each series its own)
    style: int | None = None  # dash and marker index (default: the series' position)


@dataclass(frozen=True)
class Axis:
    title: str
    scale: Literal["linear", "log2"] = "linear"
    domain: tuple[float, float] | None = None  # None: from the data
    zero: bool = True  # a linear axis starts at 0 unless the data goes below


@dataclass(frozen=True)
class Chart:
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...]
    hlines: tuple[HLine, ...] = ()
    note: str = ""  # a line under the plot (e.g. what the figures rest on)
    value_labels: bool | None = None  # None: only when there is room
    id: str = field(default="chart")
    connect: Literal["x", "order"] = "x"  # join a series' points by x, or in the order given
    front: tuple[tuple[float, float], ...] = ()  # a dashed grey line through these (x, y), e.g. a Pareto front

    @property
    def empty(self) -> bool:
        return not self.hlines and not any(s.points for s in self.series)


# ---------------------------------------------------------------- scales


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _linear_ticks(lo: float, hi: float) -> tuple[float, float, list[float]]:
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    step = _nice_step(hi - lo)
    start = math.floor(lo / step) * step
    end = math.ceil(hi / step) * step
    ticks = []
    v = start
    while v <= end + step / 2:
        ticks.append(round(v, 10))
        v += step
    return start, end, ticks


def _log2_ticks(lo: float, hi: float) -> tuple[float, float, list[float]]:
    lo_e = math.floor(math.log2(lo))
    hi_e = math.ceil(math.log2(hi))
    if hi_e <= lo_e:
        lo_e, hi_e = lo_e - 1, hi_e + 1
    ticks = [2.0**e for e in range(lo_e, hi_e + 1)]
    return 2.0**lo_e, 2.0**hi_e, ticks


@dataclass(frozen=True)
class _Scale:
    lo: float
    hi: float
    ticks: list[float]
    log: bool
    px_lo: float
    px_hi: float

    def __call__(self, v: float) -> float:
        if self.log:
            a, b, t = math.log2(self.lo), math.log2(self.hi), math.log2(v)
        else:
            a, b, t = self.lo, self.hi, v
        return self.px_lo + (t - a) / (b - a) * (self.px_hi - self.px_lo)


def _scale(axis: Axis, values: Sequence[float], px_lo: float, px_hi: float) -> _Scale:
    if axis.scale == "log2":
        vals = [v for v in values if v > 0]
        lo, hi = axis.domain or ((min(vals), max(vals)) if vals else (1.0, 64.0))
        lo, hi, ticks = _log2_ticks(max(lo, 1e-9), max(hi, lo))
        return _Scale(lo, hi, ticks, True, px_lo, px_hi)
    if axis.domain:
        lo, hi = axis.domain
    elif values:
        lo, hi = min(values), max(values)
        if axis.zero:
            lo = min(lo, 0.0)
        hi = hi * 1.08 if hi > 0 else hi + 1
    else:
        lo, hi = 0.0, 1.0
    lo, hi, ticks = _linear_ticks(lo, hi)
    return _Scale(lo, hi, ticks, False, px_lo, px_hi)


def _tick_label(v: float) -> str:
    if v == int(v):
        return f"{int(v):,}"
    return fmt_number(v)


# ---------------------------------------------------------------- drawing


def _marker(shape: str, x: float, y: float, color: str, hollow: bool) -> str:
    fill = "#fff" if hollow else color
    common = f'fill="{fill}" stroke="{color}" stroke-width="1.5"'
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" {common}/>'
    if shape == "triangle":
        return f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 4:.1f} L{x - 5:.1f},{y + 4:.1f} Z" {common}/>'
    if shape == "diamond":
        d = f"M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z"
        return f'<path d="{d}" {common}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" {common}/>'


def _legend_rows(names: Sequence[str], x0: float, x1: float) -> list[list[tuple[str, float]]]:
    """Legend entries laid out left to right, wrapping onto a new row when one would pass ``x1``."""
    rows: list[list[tuple[str, float]]] = [[]]
    lx = x0
    for name in names:
        width = 24 + 7 * len(name) + 18
        if rows[-1] and lx + width - 18 > x1:
            rows.append([])
            lx = x0
        rows[-1].append((name, lx))
        lx += width
    return rows


def _dash_attr(k: int) -> str:
    dash = DASHES[k % len(DASHES)]
    return f' stroke-dasharray="{dash}"' if dash else ""


def render_svg(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (no blank lines, so it can sit in Markdown as raw HTML)."""
    series = chart.series
    x0, x1 = MARGIN_L, WIDTH - MARGIN_R
    shown = [s for s in series if s.points or s.band or any(h.series == s.name for h in chart.hlines)]
    legend = _legend_rows([s.name for s in shown], x0, x1) if shown else []
    extra = 16 * max(len(legend) - 1, 0)  # each further legend row pushes the plot down
    height = HEIGHT + extra
    y0, y1 = height - MARGIN_B, MARGIN_T + extra

    xs = [p.x for s in series for p in s.points] + [b.x for s in series for b in s.band]
    ys = (
        [p.y for s in series for p in s.points]
        + [h.y for h in chart.hlines]
        + [v for s in series for b in s.band for v in (b.lo, b.hi)]
    )
    pad = X_PAD if chart.x.scale == "log2" else 0
    sx = _scale(chart.x, xs, x0 + pad, x1 - pad)
    sy = _scale(chart.y, ys, y0, y1)
    groups = list(dict.fromkeys(s.group or s.name for s in series))
    colors = {s.name: PALETTE[groups.index(s.group or s.name) % len(PALETTE)] for s in series}
    styles = {s.name: (s.style if s.style is not None else i) for i, s in enumerate(series)}
    n_points = sum(len(s.points) for s in series)
    labels_on = chart.value_labels if chart.value_labels is not None else n_points <= 24

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bench-chart" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-labelledby="{html_attr(chart.id)}-title" font-family="sans-serif" font-size="12">',
        f'<title id="{html_attr(chart.id)}-title">{html_text(chart.title)}</title>',
        f'<text x="{WIDTH / 2:.0f}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
        f"{html_text(chart.title)}</text>",
    ]
    # grid and ticks
    out.append('<g class="axes" stroke="#999" stroke-width="1">')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>')
    out.append("</g>")
    out.append('<g class="ticks" fill="#444">')
    for t in sx.ticks:
        px = sx(t)
        out.append(f'<line x1="{px:.1f}" y1="{y0}" x2="{px:.1f}" y2="{y1}" stroke="#eee"/>')
        out.append(f'<text x="{px:.1f}" y="{y0 + 16}" text-anchor="middle">{_tick_label(t)}</text>')
    for t in sy.ticks:
        py = sy(t)
        out.append(f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{py + 4:.1f}" text-anchor="end">{_tick_label(t)}</text>')
    out.append("</g>")
    x_title = chart.x.title + (" (log₂ scale)" if chart.x.scale == "log2" else "")
    out.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 18}" text-anchor="middle">{html_text(x_title)}</text>')
    out.append(
        f'<text transform="translate(16,{(y0 + y1) / 2:.0f}) rotate(-90)" text-anchor="middle">'
        f"{html_text(chart.y.title)}</text>"
    )

    # confidence bands, behind everything drawn for the series
    for s in series:
        if len(s.band) < 1:
            continue
        band = sorted(s.band, key=lambda b: b.x)
        color = colors[s.name]
        tip = f"{s.name}: confidence band ({len(band)} level(s))"
        out.append(f'<g class="band" data-series="{html_attr(s.name)}"><title>{html_text(tip)}</title>')
        if len(band) == 1:  # one level: an error bar
            b = band[0]
            px = sx(b.x)
            out.append(
                f'<line x1="{px:.1f}" y1="{sy(b.lo):.1f}" x2="{px:.1f}" y2="{sy(b.hi):.1f}" stroke="{color}" '
                'stroke-width="8" stroke-opacity="0.25"/>'
            )
        else:
            upper = [f"{sx(b.x):.1f},{sy(b.hi):.1f}" for b in band]
            lower = [f"{sx(b.x):.1f},{sy(b.lo):.1f}" for b in reversed(band)]
            out.append(
                f'<polygon points="{" ".join(upper + lower)}" fill="{color}" fill-opacity="0.18" stroke="none"/>'
            )
        out.append("</g>")

    # reference lines for figures without an x
    for i, h in enumerate(chart.hlines):
        color = colors.get(h.series, "#555")
        py = sy(h.y)
        ty = py - 5 if i % 2 == 0 else py + 14
        out.append(
            f'<g class="hline" data-series="{html_attr(h.series)}">'
            f"<title>{html_text(h.series)}: {html_text(h.text)}</title>"
        )
        out.append(
            f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" stroke="{color}" stroke-width="2" '
            'stroke-dasharray="8 4"/>'
        )
        out.append(
            f'<text x="{x1 - 4}" y="{ty:.1f}" text-anchor="end" fill="{color}">'
            f"{html_text(h.series)}: {html_text(h.text)}</text></g>"
        )

    # a front (e.g. Pareto) through the marked points
    if len(chart.front) > 1:
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in chart.front)
        out.append(
            f'<polyline class="front" points="{path}" fill="none" stroke="#555" stroke-width="1.5" '
            'stroke-dasharray="3 3"/>'
        )

    # series
    for s in series:
        if not s.points:
            continue
        color, k = colors[s.name], styles[s.name]
        pts = sorted(s.points, key=lambda p: p.x) if chart.connect == "x" else list(s.points)
        out.append(f'<g class="series" data-series="{html_attr(s.name)}">')
        if len(pts) > 1:
            path = " ".join(f"{sx(p.x):.1f},{sy(p.y):.1f}" for p in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{_dash_attr(k)}/>')
        for p in pts:
            px, py = sx(p.x), sy(p.y)
            value = p.label or (("≈" if p.approximate else "") + fmt_number(p.y))
            tip = f"{s.name}: {value} at {chart.x.title.lower()} {_tick_label(p.x)}"
            if p.tooltip:
                tip += f" ({p.tooltip})"
            out.append(f"<g><title>{html_text(tip)}</title>")
            if p.marked:
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="8" fill="none" stroke="#333" stroke-width="1.5"/>')
            out.append(_marker(MARKERS[k % len(MARKERS)], px, py, color, p.approximate))
            if labels_on:
                out.append(
                    f'<text x="{px:.1f}" y="{py - 9:.1f}" text-anchor="middle" fill="{color}">{html_text(value)}</text>'
                )
            out.append("</g>")
        out.append("</g>")

    # legend: rows under the title, outside the plot
    if legend:
        out.append('<g class="legend">')
        by_name = {s.name: s for s in shown}
        for r, row in enumerate(legend):
            ly = 36 + 16 * r
            for name, lx in row:
                s = by_name[name]
                color, k = colors[name], styles[name]
                out.append(f'<g class="legend-item" data-series="{html_attr(name)}">')
                out.append(
                    f'<line x1="{lx:.0f}" y1="{ly}" x2="{lx + 18:.0f}" y2="{ly}" stroke="{color}" '
                    f'stroke-width="2"{_dash_attr(k)}/>'
                )
                out.append(_marker(MARKERS[k % len(MARKERS)], lx + 9, ly, color, False))
                out.append(f'<text x="{lx + 24:.0f}" y="{ly + 4}">{html_text(s.name)}</text>')
                out.append("</g>")
        out.append("</g>")
    if chart.empty:
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" fill="#666">'
            "no figures for this chart</text>"
        )
    if chart.note:
        out.append(f'<text x="{x0}" y="{height - 2}" font-size="11" fill="#555">{html_text(chart.note)}</text>')
    out.append("</svg>")
    return "\n".join(out)
