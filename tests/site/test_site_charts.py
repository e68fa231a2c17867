from __future__ import annotations

import xml.etree.ElementTree as ET

from site_helpers import BASELINE_ID, EAGLE_ID, FX_BASELINE_ID, FX_EAGLE_ID, fixture, shipped

from bench.site.chartdata import concurrency_chart
from bench.site.charts import Axis, Chart, HLine, Point, Series, render_svg
from bench.site.metrics import metric_spec

NS = {"s": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML, or this raises


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_log2_axis_ticks_are_powers_of_two() -> None:
    chart = Chart("t", Axis("Concurrency", scale="log2"), Axis("y"), (Series("a", (Point(1, 10), Point(64, 50))),))
    labels = texts(parse(render_svg(chart)))
    for tick in ("1", "2", "4", "8", "16", "32", "64"):
        assert tick in labels
    assert "Concurrency (log₂ scale)" in labels


def test_saturation_level_is_a_dashed_line_not_a_point() -> None:
    rec = shipped(BASELINE_ID)
    chart = concurrency_chart(
        [("baseline", rec, metric_spec("total_throughput"))], title="T", y_title="Total throughput (tok/s)"
    )
    assert chart.series[0].points == ()  # nothing placed at an invented x
    assert len(chart.hlines) == 1
    svg = render_svg(chart)
    root = parse(svg)
    dashed = [ln for ln in root.iter("{http://www.w3.org/2000/svg}line") if ln.get("stroke-dasharray") == "8 4"]
    assert len(dashed) == 1
    assert any("at saturation, concurrency not stated" in t and "≈773" in t for t in texts(root))


def test_single_point_record_renders_with_value_label_and_tooltip() -> None:
    rec = shipped(EAGLE_ID)
    chart = concurrency_chart(
        [("eagle3", rec, metric_spec("per_request_tok_s"))], title="T", y_title="Per-request tok/s"
    )
    assert [(p.x, p.y) for p in chart.series[0].points] == [(1.0, 80.9)]
    root = parse(render_svg(chart))
    assert "80.9" in texts(root)
    titles = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("eagle3: 80.9 at concurrency 1" in t for t in titles)
    assert "256" in texts(root)  # the x axis spans the stated sweep 1..250


def test_variants_overlaid_with_legend() -> None:
    spec = metric_spec("output_throughput")
    lines = [("baseline", fixture(FX_BASELINE_ID), spec), ("eagle3", fixture(FX_EAGLE_ID), spec)]
    chart = concurrency_chart(lines, title="T", y_title="y")
    root = parse(render_svg(chart))
    series = [g.get("data-series") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-series")]
    assert series == ["baseline", "eagle3"]
    legend = next(g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "legend")
    assert {"baseline", "eagle3"} <= set(texts(legend))
    assert len(root.findall(".//s:polyline", NS)) == 2


def test_text_in_svg_is_escaped() -> None:
    chart = Chart(
        "<script>x</script>",
        Axis("x", scale="log2"),
        Axis("y"),
        (Series("<b>s</b>", (Point(2, 3),)),),
        hlines=(HLine(5, "<img src=x>", "<b>s</b>"),),
    )
    svg = render_svg(chart)
    parse(svg)
    assert "<script>" not in svg and "<img" not in svg and "<b>" not in svg


def test_empty_chart_says_so() -> None:
    chart = Chart("t", Axis("x", scale="log2"), Axis("y"), (Series("a"),))
    assert chart.empty
    assert "no figures for this chart" in texts(parse(render_svg(chart)))


def test_svg_has_no_blank_lines() -> None:
    spec = metric_spec("ttft_p50")
    svg = render_svg(concurrency_chart([("b", fixture(FX_BASELINE_ID), spec)], title="T", y_title="y"))
    assert "\n\n" not in svg
