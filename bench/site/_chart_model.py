"""What a chart is, as data, and the geometry every chart shares: scales, ticks, the colour palette and where value
labels go. Drawing is :mod:`bench.site._chart_svg`; nothing here knows about records.

* A :class:`Chart` has two axes, series of points (each with an optional confidence band), horizontal lines for
  figures with no x (:class:`HLine`: "at saturation, concurrency not stated" is never placed at an invented x), and
  shaded horizontal zones (:class:`Zone`: e.g. a ratio chart's noise floor around 1).
* Scales map values to pixels: larger y values sit higher (smaller SVG y), and the ticks of an axis always cover
  its data.
* Value labels are placed where they overlap no other label, marker or the plot's edge (above, below, right or
  left of their point); a label with no free place is left out, and the point keeps its value in its tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "PALETTE",
    "Axis",
    "Band",
    "Chart",
    "HLine",
    "LabelSpot",
    "Point",
    "Scale",
    "Series",
    "Zone",
    "place_labels",
    "scale_for",
]

# Okabe-Ito hues, darkened where the original has less than 4.5:1 contrast on white (their value labels are text).
# The site's stylesheet (docs/assets/css/bench.css) sets these per colour scheme, lighter ones on the dark scheme.
PALETTE = ("#0072B2", "#BB5300", "#008460", "#BB4D8A", "#996A00", "#6A5ACD", "#000000", "#80770A")
CHAR_W, LABEL_H = 7.0, 14.0  # a 12 px sans-serif label: the width of one character (generous), its line box


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
class Zone:
    """A shaded horizontal band across the plot from ``lo`` to ``hi`` (a line where they are equal), with its text."""

    lo: float
    hi: float
    text: str


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
    zones: tuple[Zone, ...] = ()
    note: str = ""  # a line under the plot (e.g. what the figures rest on)
    value_labels: bool | None = None  # None: when there are few enough points for labels to help
    id: str = field(default="chart")
    connect: Literal["x", "order"] = "x"  # join a series' points by x, or in the order given
    front: tuple[tuple[float, float], ...] = ()  # a dashed grey line through these (x, y), e.g. a Pareto front

    @property
    def empty(self) -> bool:
        return not self.hlines and not any(s.points for s in self.series)

    def y_values(self) -> list[float]:
        """Every y the plot must show: points, bands, lines without an x, zones."""
        return (
            [p.y for s in self.series for p in s.points]
            + [v for s in self.series for b in s.band for v in (b.lo, b.hi)]
            + [h.y for h in self.hlines]
            + [v for z in self.zones for v in (z.lo, z.hi)]
        )

    def x_values(self) -> list[float]:
        return [p.x for s in self.series for p in s.points] + [b.x for s in self.series for b in s.band]


# ---------------------------------------------------------------- scales


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _linear_ticks(lo: float, hi: float) -> tuple[float, float, list[float], float]:
    """(first tick, last tick, ticks, step): round multiples of the step, from at or below ``lo`` to at or above
    ``hi``."""
    if hi - lo <= max(abs(lo), abs(hi)) * 1e-9:  # one value, or values too close for ticks a float can tell apart
        hi = lo + (abs(lo) or 1.0)
    step = _nice_step(hi - lo)
    first, last = math.floor(lo / step), math.ceil(hi / step)
    ticks = [k * step for k in range(first, last + 1)]
    return ticks[0], ticks[-1], ticks, step


def _log2_ticks(lo: float, hi: float) -> tuple[float, float, list[float]]:
    lo_e = math.floor(math.log2(lo))
    hi_e = math.ceil(math.log2(hi))
    if hi_e <= lo_e:
        lo_e, hi_e = lo_e - 1, hi_e + 1
    ticks = [2.0**e for e in range(lo_e, hi_e + 1)]
    return 2.0**lo_e, 2.0**hi_e, ticks


@dataclass(frozen=True)
class Scale:
    """Values from ``lo`` to ``hi`` onto pixels from ``px_lo`` to ``px_hi`` (for y, ``px_lo`` is the bottom)."""

    lo: float
    hi: float
    ticks: list[float]
    log: bool
    px_lo: float
    px_hi: float
    step: float = 1.0  # a linear axis' tick step

    def __call__(self, v: float) -> float:
        if self.log:
            a, b, t = math.log2(self.lo), math.log2(self.hi), math.log2(v)
        else:
            a, b, t = self.lo, self.hi, v
        return self.px_lo + (t - a) / (b - a) * (self.px_hi - self.px_lo)

    def tick_label(self, v: float) -> str:
        """A tick's value, exactly: as many decimals as the step needs (``2.5``, ``0.05``), thousands separated."""
        if self.log:
            return f"{int(v):,}" if v >= 1 else f"{v:g}"
        decimals = 0
        while decimals < 12 and abs(self.step * 10**decimals - round(self.step * 10**decimals)) > 1e-9:
            decimals += 1
        text = f"{v:,.{decimals}f}"
        return "0" if text.strip("-0.,") == "" else text


def scale_for(axis: Axis, values: Sequence[float], px_lo: float, px_hi: float) -> Scale:
    """The scale of ``axis`` over ``values``: a log2 axis in powers of two, a linear one in round steps, its ends on
    ticks so that the ticks cover every value."""
    if axis.scale == "log2":
        vals = [v for v in values if v > 0]
        lo, hi = axis.domain or ((min(vals), max(vals)) if vals else (1.0, 64.0))
        lo, hi, ticks = _log2_ticks(max(lo, 1e-9), max(hi, lo))
        return Scale(lo, hi, ticks, True, px_lo, px_hi)
    if axis.domain:
        lo, hi = axis.domain
    elif values:
        lo, hi = min(values), max(values)
        if axis.zero:
            lo = min(lo, 0.0)
        pad = (hi - lo) * 0.08 if hi > lo else abs(hi) * 0.08 or 1.0
        hi = hi + pad if hi > 0 or not axis.zero else hi + 1
        if not axis.zero:
            lo = lo - pad
    else:
        lo, hi = 0.0, 1.0
    lo, hi, ticks, step = _linear_ticks(lo, hi)
    return Scale(lo, hi, ticks, False, px_lo, px_hi, step)


# ---------------------------------------------------------------- value labels


@dataclass(frozen=True)
class LabelSpot:
    """Where a value label is drawn: its text's anchor point and ``anchor`` (SVG ``text-anchor``)."""

    x: float
    y: float
    anchor: Literal["start", "middle", "end"]

    def box(self, text: str) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of the label in pixels, from its estimated width."""
        w = CHAR_W * len(text)
        left = self.x - w / 2 if self.anchor == "middle" else self.x if self.anchor == "start" else self.x - w
        return left, self.y - LABEL_H + 3, left + w, self.y + 3


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


_SPOTS: tuple[tuple[float, float, Literal["start", "middle", "end"]], ...] = (
    (0, -9, "middle"),
    (0, 18, "middle"),
    (8, 4, "start"),
    (-8, 4, "end"),
)
"""Where a label may go, in order of preference: (dx, dy, anchor) from its point."""


def place_labels(
    points: Sequence[tuple[float, float, str]], bounds: tuple[float, float, float, float]
) -> list[LabelSpot | None]:
    """A spot for each (px, py, text) label, in order (earlier labels win), overlapping no placed label, no point's
    marker and staying within ``bounds`` (left, top, right, bottom); None where no spot is free.

    The boxes are :meth:`LabelSpot.box` (the same arithmetic, inline: a chart tries thousands of them)."""
    b0, b1, b2, b3 = bounds
    taken = [(px - 5, py - 5, px + 5, py + 5) for px, py, _ in points]  # the markers, then each placed label
    out: list[LabelSpot | None] = []
    for px, py, text in points:
        found = None
        w = CHAR_W * len(text)
        for dx, dy, anchor in _SPOTS:
            x, y = px + dx, py + dy
            left = x - w / 2 if anchor == "middle" else x if anchor == "start" else x - w
            top, right, bottom = y - LABEL_H + 3, left + w, y + 3
            if not (left >= b0 and top >= b1 and right <= b2 and bottom <= b3):
                continue
            for o in taken:
                if left < o[2] and o[0] < right and top < o[3] and o[1] < bottom:
                    break
            else:
                found = LabelSpot(x, y, anchor)
                taken.append((left, top, right, bottom))
                break
        out.append(found)
    return out
