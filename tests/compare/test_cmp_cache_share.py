"""The cache-hit share in comparisons: a share of sums with a bootstrap interval, shown but never a leader."""

from __future__ import annotations

from typing import Any

from cmp_fixtures import later, level, record

from bench.compare import (
    compare_records,
    comparison_rows,
    flags,
    render_comparison_json,
    render_comparison_markdown,
)
from bench.settings import RegressionThresholds


def _cached(concurrency: int, tok_s: float, cached: list[int], inputs: list[int], **extra: Any) -> dict[str, Any]:
    lv = level(concurrency, tok_s, n=len(cached), **extra)
    lv["samples"] = {**lv["samples"], "cached_tokens": cached, "input_tokens": inputs}
    share = round(sum(cached) / sum(inputs), 6)
    lv["prefix_cache"] = {
        "cached_tokens": sum(cached),
        "input_tokens": sum(inputs),
        "hit_share": share,
        "requests": len(cached),
        "source": "meta_info.cached_tokens per request",
    }
    return lv


def test_share_of_sums_with_an_interval_and_no_leader() -> None:
    # per request (cached, prompt): shares 0.5 and 0.95, but the share of sums is 200 / 220, not their mean
    base = record("baseline", [_cached(1, 100.0, [10, 190] * 20, [20, 200] * 20)])
    cand = record("eagle3", [_cached(1, 150.0, [0, 0] * 20, [21, 201] * 20)])
    c = compare_records([base], [cand], n_boot=400)
    m = c.levels[0].metric("cache_hit_share")
    assert m is not None and m.neutral and m.leader is None
    assert m.a == 200 / 220 and m.b == 0.0
    assert m.ratio.value == 0.0 and (m.ratio.lo, m.ratio.hi) == (0.0, 0.0) and m.ratio.n_a == 40
    assert c.levels[0].winner == "b"  # decided by the speed metrics alone
    (row,) = [r for r in comparison_rows(c) if r.figure == "cache_hit_share"]
    assert row.better is None and (row.baseline, row.candidate) == (200 / 220, 0.0)
    assert "| Cache-hit share (cached/prompt tokens) |" in render_comparison_markdown(c)
    js = render_comparison_json(c)
    metric = next(x for x in js["levels"][0]["metrics"] if x["metric"] == "cache_hit_share")
    assert metric["higher_is_better"] is None


def test_interval_of_the_share_covers_the_spread() -> None:
    cached = [0, 40] * 20
    base = record("baseline", [_cached(1, 100.0, cached, [50] * 40)])
    cand = record("eagle3", [_cached(1, 100.0, [10, 30] * 20, [50] * 40)])
    m = compare_records([base], [cand], n_boot=2000).levels[0].metric("cache_hit_share")
    assert m is not None and m.a == 0.4 and m.b == 0.4 and m.ratio.value == 1.0
    assert m.ratio.lo is not None and m.ratio.hi is not None and m.ratio.lo < 1.0 < m.ratio.hi


def test_stated_share_without_samples_is_a_point_estimate() -> None:
    base = record("baseline", [_cached(1, 100.0, [5] * 10, [10] * 10)])
    cand = record("eagle3", [_cached(1, 100.0, [1] * 10, [10] * 10)])
    cand = cand.model_copy(update={"levels": [cand.levels[0].model_copy(update={"samples": None})]})
    m = compare_records([base], [cand], n_boot=50).levels[0].metric("cache_hit_share")
    assert m is not None and (m.a, m.b) == (0.5, 0.1) and not m.ratio.has_interval


def test_a_changing_cache_share_is_never_a_regression() -> None:
    th = RegressionThresholds(ratio_threshold=0.05, window=5, min_history=3)
    shares = [0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1]
    runs = []
    for i, share in enumerate(shares):
        lv = _cached(1, 100.0, [int(share * 100)] * 10, [100] * 10)
        lv["per_request_tok_s"] = {"unit": "tok/s", "formula": "f", "mean": 100.0}
        runs.append(record("baseline", [{**lv, "samples": None}], when=later(i), suffix=f"{i:07x}"))
    assert [f for f in flags(runs, th) if f.metric == "cache_hit_share"] == []
