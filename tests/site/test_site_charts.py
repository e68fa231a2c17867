from __future__ import annotations

import xml.etree.ElementTree as ET

from site_helpers import (
    BASELINE_ID,
    EAGLE_ID,
    FX_BASELINE_ID,
    FX_EAGLE_ID,
    fixture,
    fixture_site,
    shipped,
    shipped_site,
    site_of,
)

from bench.compare import level_interval
from bench.figures import figure as metric_spec
from bench.site import (
    Axis,
    Band,
    Chart,
    HLine,
    Point,
    Series,
    concurrency_chart,
    experiment_charts,
    pareto_front,
    percentile_chart,
    percentile_figure,
    render_svg,
    tradeoff_chart,
    tradeoff_figure,
)

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
    series = [
        g.get("data-series")
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if "series" in (g.get("class") or "").split()
    ]
    assert series == ["baseline", "eagle3"]
    (legend,) = groups(root, "legend")
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


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter("{http://www.w3.org/2000/svg}g") if cls in (g.get("class") or "").split()]


def test_pareto_front_of_a_constructed_set() -> None:
    pts = [(10, 100), (20, 90), (15, 80), (30, 50), (5, 120), (30, 40), (20, 90), (1, 1)]
    # (15, 80) is beaten by (20, 90); (30, 40) by (30, 50); (1, 1) by everything; equal points both stay
    assert pareto_front(pts) == [0, 1, 3, 4, 6]
    assert pareto_front([]) == [] and pareto_front([(1, 1)]) == [0]


def test_tradeoff_chart_marks_the_front_labels_concurrency_and_divides_per_gpu() -> None:
    base, cand = fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)
    chart = tradeoff_chart([("baseline", base), ("eagle3", cand)], title="T")
    assert chart.y.title == "Total throughput per GPU (tok/s)"  # both records state 1 GPU
    pts = [(s.name, p) for s in chart.series for p in s.points]
    front = pareto_front([(p.x, p.y) for _, p in pts])
    assert [i for i, (_, p) in enumerate(pts) if p.marked] == front and front
    assert all(p.label.startswith("C=") for _, p in pts)
    svg = render_svg(chart)
    root = parse(svg)
    assert len(root.findall(".//s:polyline[@class='front']", NS)) == 1
    assert "C=32" in texts(root)
    # points of a curve are joined in concurrency order, not by x
    xs = [p.x for p in chart.series[0].points]
    assert xs == sorted(xs, reverse=True)  # per-request tok/s falls as concurrency rises


def test_tradeoff_is_per_server_when_a_gpu_count_is_unknown() -> None:
    rec = fixture(FX_BASELINE_ID)
    gpu = rec.environment.gpu.model_copy(update={"count": None})
    rec = rec.model_copy(update={"environment": rec.environment.model_copy(update={"gpu": gpu})})
    chart = tradeoff_chart([("baseline", rec)], title="T")
    assert chart.y.title == "Total throughput per server (tok/s)"


def test_band_only_with_repeats() -> None:
    site = fixture_site()
    with_repeats = experiment_charts(site, "fixture-repeats", "total_throughput")
    assert with_repeats.count('class="band ') == 2 and "shaded: 95% bootstrap interval" in with_repeats
    single = experiment_charts(site, "eagle-fast-verify", "total_throughput")
    assert "<svg" in single and 'class="band ' not in single


def test_band_is_bench_compare_interval_of_the_mean_over_runs() -> None:
    site = fixture_site()
    latest = next(r for r in site.latest_per_variant("fixture-repeats") if r.variant == "baseline")
    runs = site.runs(latest)
    assert len(runs) == 3
    spec = metric_spec("total_throughput")
    chart = concurrency_chart([("baseline", latest, spec)], title="T", y_title="y", repeats={"baseline": runs})
    (series,) = chart.series
    levels = [next(lv for lv in r.levels if lv.key == "8") for r in runs]
    iv = level_interval("total_throughput", levels)
    assert iv is not None and iv.n_runs == 3 and iv.lo < iv.point < iv.hi
    band = next(b for b in series.band if b.x == 8)
    assert (band.lo, band.hi) == (iv.lo, iv.hi)
    assert next(p for p in series.points if p.x == 8).y == iv.point


def test_band_drawn_behind_series_and_every_part_tagged_for_the_legend_toggle() -> None:
    chart = Chart(
        "t",
        Axis("x", scale="log2"),
        Axis("y"),
        (
            Series("a", (Point(1, 10), Point(2, 12)), band=(Band(1, 9, 11), Band(2, 11, 13))),
            Series("b", (Point(1, 5),)),
        ),
    )
    root = parse(render_svg(chart))
    (band,) = groups(root, "band")
    assert band.get("data-series") == "a" and band.find("s:polygon", NS) is not None
    assert [g.get("data-series") for g in groups(root, "legend-item")] == ["a", "b"]


def test_empty_charts_are_replaced_by_one_line_of_text() -> None:
    site = shipped_site()  # transcribed: no level states both figures, no percentiles
    out = tradeoff_figure(site, "eagle-fast-verify")
    assert "<svg" not in out and out.startswith("*No record of experiment") and out.count("\n") == 1
    out = percentile_figure(site, "eagle-fast-verify", "ttft_ms")
    assert "<svg" not in out and "states TTFT percentiles" in out


def test_percentile_chart_one_colour_per_variant_one_dash_per_percentile() -> None:
    chart = percentile_chart(
        [("baseline", fixture(FX_BASELINE_ID)), ("eagle3", fixture(FX_EAGLE_ID))], "ttft_ms", title="T", y_title="ms"
    )
    assert [s.name for s in chart.series] == [
        "baseline p50",
        "baseline p90",
        "baseline p99",
        "eagle3 p50",
        "eagle3 p90",
        "eagle3 p99",
    ]
    root = parse(render_svg(chart))
    colour = {g.get("data-series"): g.get("color") for g in groups(root, "series")}
    assert colour["baseline p50"] == colour["baseline p99"] != colour["eagle3 p50"]
    lines = {g.get("data-series"): g.find("s:polyline", NS) for g in groups(root, "series")}
    assert lines["baseline p90"].get("stroke-dasharray") == lines["eagle3 p90"].get("stroke-dasharray")  # type: ignore[union-attr]
    assert lines["baseline p50"].get("stroke-dasharray") is None  # type: ignore[union-attr]
    one = site_of(fixture(FX_BASELINE_ID))
    assert "<svg" in percentile_figure(one, "eagle-fast-verify", "tpot_ms")


def test_a_secret_in_a_series_name_or_tooltip_never_reaches_the_svg() -> None:
    """Each string of a point's tooltip passes through the redaction (the tooltip is built from redacted parts)."""
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    chart = Chart(
        "T",
        Axis("Concurrency", scale="log2"),
        Axis("y"),
        (
            Series(f"v {token}", (Point(2, 3, tooltip=f"run {token}"), Point(4, 5))),
            Series("plain <b>", (Point(2, 1, tooltip="mean of 3 runs"),)),
        ),
    )
    svg = render_svg(chart)
    assert token not in svg and "ghp_" not in svg
    titles = ["".join(t.itertext()) for t in parse(svg).iter("{http://www.w3.org/2000/svg}title")]
    assert "v <redacted>: 3 at concurrency 2 (run <redacted>)" in titles
    assert "v <redacted>: 5 at concurrency 4" in titles
    assert "plain <b>: 1 at concurrency 2 (mean of 3 runs)" in titles  # escaped in the SVG, read back as text
    long = Chart("T", Axis("x"), Axis("y"), (Series("s" * 4100, (Point(1, 2),)),))
    (tip,) = [
        t
        for t in parse(render_svg(long)).iter("{http://www.w3.org/2000/svg}title")
        if "more characters" in (t.text or "")
    ]
    assert tip.text is not None and tip.text.startswith("s" * 4000 + " … [")  # cut as one sentence, as before
