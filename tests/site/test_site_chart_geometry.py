"""Chart geometry asserted against the data, not against a picture the code drew before: larger values sit higher and
further right, a band contains its line, the axis ticks cover every value, value labels never overlap."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from hypothesis import example, given, settings
from hypothesis import strategies as st
from site_helpers import fixture_site

from bench.site import Axis, Band, Chart, Point, Series, experiment_charts, render_svg, tradeoff_chart
from bench.site._chart_model import LabelSpot, place_labels

S = "{http://www.w3.org/2000/svg}"


def _svg(chart: Chart) -> ET.Element:
    return ET.fromstring(render_svg(chart))


def _groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{S}g") if cls in (g.get("class") or "").split()]


def _line(root: ET.Element, series: str) -> list[tuple[float, float]]:
    """The pixel points of a series' polyline, in the order drawn."""
    (g,) = [g for g in _groups(root, "series") if g.get("data-series") == series]
    poly = g.find(f"{S}polyline")
    assert poly is not None
    return [(float(x), float(y)) for x, y in (p.split(",") for p in (poly.get("points") or "").split())]


def _ticks(root: ET.Element) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(x ticks, y ticks) as (value, pixel) pairs, read from the tick labels."""
    (g,) = _groups(root, "ticks")
    xs, ys = [], []
    for t in g.iter(f"{S}text"):
        value = float("".join(t.itertext()).replace(",", ""))
        if t.get("text-anchor") == "middle":
            xs.append((value, float(t.get("x") or 0)))
        else:
            ys.append((value, float(t.get("y") or 0) - 4))
    return xs, ys


def _interpolate(ticks: list[tuple[float, float]], value: float, log: bool = False) -> float:
    """The pixel of ``value`` from two ticks (the axis is linear in the value, or in log2 of it)."""
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    f = (lambda v: math.log2(v)) if log else (lambda v: v)
    return p0 + (f(value) - f(v0)) / (f(v1) - f(v0)) * (p1 - p0)


YS = [5.0, 40.0, 12.0, 90.0, 33.0, 61.0]
XS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]


def _chart(ys: list[float] = YS, xs: list[float] = XS, band: tuple[Band, ...] = ()) -> Chart:
    pts = tuple(Point(x, y) for x, y in zip(xs, ys, strict=True))
    return Chart("t", Axis("Concurrency", scale="log2"), Axis("y"), (Series("a", pts, band=band),))


def test_pixel_order_follows_value_order() -> None:
    root = _svg(_chart())
    drawn = _line(root, "a")
    # higher values are drawn higher (smaller SVG y); larger concurrencies further right
    by_value = [py for _, py in sorted(zip(YS, (py for _, py in drawn), strict=True))]
    assert by_value == sorted(by_value, reverse=True)
    assert [px for px, _ in drawn] == sorted(px for px, _ in drawn) and len({px for px, _ in drawn}) == len(XS)
    # and each point sits where the axis ticks say its value is
    xt, yt = _ticks(root)
    for (px, py), x, y in zip(drawn, XS, YS, strict=True):
        assert px == _approx(_interpolate(xt, x, log=True))
        assert py == _approx(_interpolate(yt, y))


def _approx(v: float) -> object:
    import pytest

    return pytest.approx(v, abs=0.11)  # pixels are written with one decimal


def test_a_band_contains_its_line() -> None:
    band = tuple(Band(x, y * 0.9, y * 1.2) for x, y in zip(XS, YS, strict=True))
    root = _svg(_chart(band=band))
    (g,) = _groups(root, "band")
    poly = g.find(f"{S}polygon")
    assert poly is not None
    pts = [(float(x), float(y)) for x, y in (p.split(",") for p in (poly.get("points") or "").split())]
    upper, lower = pts[: len(XS)], list(reversed(pts[len(XS) :]))
    for (px, py), (ux, uy), (lx, ly) in zip(_line(root, "a"), upper, lower, strict=True):
        assert px == ux == lx
        assert uy < py < ly  # the upper edge above the line, the lower edge below it


def test_real_bands_contain_their_lines() -> None:
    svg = experiment_charts(fixture_site(), "fixture-repeats", "total_throughput")
    root = ET.fromstring(re.search(r"<svg.*?</svg>", svg, flags=re.S).group(0))  # type: ignore[union-attr]
    bands = {g.get("data-series"): g.find(f"{S}polygon") for g in _groups(root, "band")}
    assert len(bands) == 2
    for name, poly in bands.items():
        assert poly is not None
        pts = [(float(x), float(y)) for x, y in (p.split(",") for p in (poly.get("points") or "").split())]
        line = _line(root, str(name))
        upper, lower = pts[: len(line)], list(reversed(pts[len(line) :]))
        for (px, py), (_, uy), (_, ly) in zip(line, upper, lower, strict=True):
            assert uy <= py <= ly, (name, px)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.just(0.0), st.floats(1e-4, 1e7), st.floats(-1e6, -1e-4)),  # figures, not 1e-97
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
@example([-1000000.0, -999999.9999999999], False)  # found by hypothesis: one tick, a scale of zero width
def test_axis_ticks_cover_the_data(ys: list[float], zero: bool) -> None:
    xs = [float(2**i) for i in range(len(ys))]
    pts = tuple(Point(x, y) for x, y in zip(xs, ys, strict=True))
    chart = Chart("t", Axis("x", scale="log2"), Axis("y", zero=zero), (Series("a", pts),))
    xt, yt = _ticks(_svg(chart))
    assert min(v for v, _ in yt) <= min(ys) and max(v for v, _ in yt) >= max(ys)
    assert min(v for v, _ in xt) <= min(xs) and max(v for v, _ in xt) >= max(xs)
    # ticks run in value order along their axis: up for y, right for x
    assert [p for _, p in sorted(yt)] == sorted((p for _, p in yt), reverse=True)
    assert [p for _, p in sorted(xt)] == sorted(p for _, p in xt)


def _label_boxes(root: ET.Element) -> list[tuple[float, float, float, float]]:
    boxes = []
    for t in root.iter(f"{S}text"):
        if t.get("class") == "value":
            spot = LabelSpot(float(t.get("x") or 0), float(t.get("y") or 0), t.get("text-anchor"))  # type: ignore[arg-type]
            boxes.append(spot.box("".join(t.itertext())))
    return boxes


def test_value_labels_at_high_concurrency_do_not_overlap() -> None:
    # three series whose points crowd together at high concurrency: every label has a candidate spot, not all fit
    xs = [float(2**i) for i in range(10)]
    series = tuple(
        Series(name, tuple(Point(x, 1000 + k * 3 + (i % 2), label=f"C={int(x)}") for i, x in enumerate(xs)))
        for k, name in enumerate(("a", "b", "c"))
    )
    root = _svg(Chart("t", Axis("Concurrency", scale="log2"), Axis("y"), series))
    boxes = _label_boxes(root)
    assert 0 < len(boxes) < 30  # some labels are left out rather than drawn over each other
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    note = " ".join("".join(t.itertext()) for t in root.iter(f"{S}text") if t.get("font-size") == "11")
    assert "hover a point for its value" in note


def test_tradeoff_labels_of_a_real_record_do_not_overlap() -> None:
    site = fixture_site()
    records = site.latest_per_variant("fixture-repeats")
    root = _svg(tradeoff_chart([(r.variant, r) for r in records], title="t"))
    boxes = _label_boxes(root)
    assert boxes
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def test_place_labels_keeps_a_label_off_other_points_and_inside_the_plot() -> None:
    spots = place_labels([(100, 100, "first"), (100, 112, "second"), (700, 100, "edge")], (0, 0, 720, 400))
    first, second, edge = spots
    assert first is not None and first.y < 100  # above its point
    assert second is not None and second.box("second")[1] > 100  # not over the first point: below its own
    assert edge is not None and edge.box("edge")[2] <= 720
    assert place_labels([(5, 5, "x" * 200)], (0, 0, 720, 400)) == [None]  # no room anywhere: left out
