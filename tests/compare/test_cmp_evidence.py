"""A verdict is a claim: each rule of bench.compare.evidence / sides / verdict, with intervals checked as numbers."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from cmp_fixtures import level, record

from bench.compare import (
    compare_records,
    flags,
    render_comparison_json,
    render_comparison_text,
    series_figure,
)
from bench.figures import figure
from bench.settings import ComparisonSettings, RegressionThresholds, Settings


def _stated(concurrency: int, tok_s: float, *, completed: int = 30, **extra: Any) -> dict[str, Any]:
    """A level that states one figure and no per-request samples (as a transcription or an import would)."""
    out: dict[str, Any] = {
        "concurrency": concurrency,
        "requests_completed": completed,
        "per_request_tok_s": {"unit": "tok/s", "formula": "f", "value": tok_s},
    }
    out.update(extra)
    return out


def _verdict_part(text: str) -> str:
    return text.split(" Left out:")[0]


# ---------------------------------------------------------------- 1. indicative, noise floor, directional


def test_point_estimates_a_hair_apart_are_indicative_not_faster() -> None:
    # issue 9: two records without samples stating 100 and 100.1 tok/s read "eagle3 is faster ... leads by 0%"
    c = compare_records([record("baseline", [_stated(1, 100.0)])], [record("eagle3", [_stated(1, 100.1)])])
    assert c.estimate == "point"
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.value == pytest.approx(1.001) and not m.ratio.has_interval
    assert m.evidence == "indicative" and not m.decided
    assert c.levels[0].winner == "indicative"
    assert "faster than" not in c.verdict and "leads by" not in c.verdict
    assert c.verdict.startswith("Indicative only: no compared ratio has an interval")
    assert "the point estimates of per-request tok/s differ by less than the ±5% noise floor" in c.verdict
    assert "ratio 1.001" in c.verdict


def test_point_estimates_far_apart_are_still_only_indicative() -> None:
    c = compare_records([record("baseline", [_stated(1, 100.0)])], [record("eagle3", [_stated(1, 130.0)])])
    assert "faster than" not in c.verdict and "leads by" not in c.verdict
    assert "At C=1 the point estimates favour eagle3 by 30% in per-request tok/s (130 vs 100 tok/s, no interval)" in (
        c.verdict
    )


def _scaled_pair(factor: float, n: int = 40) -> tuple[Any, Any, list[float], list[float]]:
    """Baseline requests at ~100 tok/s; the candidate's requests are the same ones, ``factor`` times faster."""
    rng = np.random.default_rng(7)
    rates = 100.0 * rng.uniform(0.9, 1.1, n)
    out = 128

    def lv(r: np.ndarray) -> dict[str, Any]:
        ttft = [50.0] * n
        e2e = [50.0 + out / x * 1000.0 for x in r]
        return {
            "concurrency": 1,
            "requests_completed": n,
            "duration_s": sum(e2e) / 1000.0,
            "samples": {"ttft_ms": ttft, "e2e_ms": e2e, "output_tokens": [out] * n, "input_tokens": [200] * n},
        }

    cand_rates = rates * factor
    return record("baseline", [lv(rates)]), record("eagle3", [lv(cand_rates)]), list(rates), list(cand_rates)


def _normal_interval(a: list[float], b: list[float]) -> tuple[float, float]:
    """The delta-method 95% interval of mean(b) / mean(a) for independent samples: what a bootstrap approximates."""
    ma, mb = float(np.mean(a)), float(np.mean(b))
    va, vb = float(np.var(a)) / len(a), float(np.var(b)) / len(b)
    r = mb / ma
    se = r * math.sqrt(va / ma**2 + vb / mb**2)
    return r - 1.96 * se, r + 1.96 * se


@pytest.mark.parametrize(
    ("factor", "evidence", "winner"), [(1.2, "decided", "b"), (1.01, "no_difference", "no_difference")]
)
def test_interval_of_a_known_ratio_and_what_it_shows(factor: float, evidence: str, winner: str) -> None:
    base, cand, ra, rb = _scaled_pair(factor)
    c = compare_records([base], [cand], n_boot=4000, seed=1)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.lo is not None and m.ratio.hi is not None
    assert m.ratio.value == pytest.approx(factor, rel=1e-9)  # the same requests, scaled: the ratio is exact
    lo, hi = _normal_interval(ra, rb)
    assert m.ratio.lo == pytest.approx(lo, abs=0.006) and m.ratio.hi == pytest.approx(hi, abs=0.006)
    assert m.evidence == evidence and c.levels[0].winner == winner


def test_known_ratio_numbers() -> None:
    # ±10% uniform request speeds: CV = 0.2 / sqrt(12); 40 requests a side; ratio 1.2 -> half-width about 0.030
    base, cand, _, _ = _scaled_pair(1.2)
    m = compare_records([base], [cand], n_boot=4000, seed=1).levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.lo is not None and m.ratio.hi is not None
    half = 1.96 * 1.2 * math.sqrt(2) * (0.2 / math.sqrt(12)) / math.sqrt(40)
    assert half == pytest.approx(0.0304, abs=0.0005)
    assert (m.ratio.hi - m.ratio.lo) / 2 == pytest.approx(half, rel=0.25)
    assert 1.15 < m.ratio.lo < 1.2 < m.ratio.hi < 1.25


def test_no_difference_shown_inside_the_noise_floor_and_the_floor_is_a_setting() -> None:
    base, cand, _, _ = _scaled_pair(1.01)
    c = compare_records([base], [cand], n_boot=2000)
    assert c.verdict.startswith("No difference beyond the ±5% noise floor is shown at the one level both state (C=1).")
    assert "At C=1 no difference in per-request tok/s is shown (ratio 1.01, 95% interval" in c.verdict
    assert "inside the ±5% noise floor" in c.verdict
    # with a floor of 0.1% the same interval (it contains 1) only leaves the question open
    tight = Settings(comparison=ComparisonSettings(noise_floor=0.001))
    c2 = compare_records([base], [cand], n_boot=2000, settings=tight)
    assert c2.levels[0].winner == "unresolved" and "±0.1% noise floor" in c2.verdict


def test_an_interval_beyond_one_but_not_beyond_the_floor_is_not_a_verdict() -> None:
    base, cand, _, _ = _scaled_pair(1.045, n=400)
    c = compare_records([base], [cand], n_boot=2000)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.lo is not None and m.ratio.hi is not None
    assert 1.0 < m.ratio.lo < 1.05 < m.ratio.hi  # excludes 1, straddles the floor's edge
    assert m.ratio.resolved and m.evidence == "unresolved" and c.levels[0].winner == "unresolved"
    assert "faster than" not in c.verdict
    loose = Settings(comparison=ComparisonSettings(noise_floor=0.0))
    assert compare_records([base], [cand], n_boot=2000, settings=loose).levels[0].winner == "b"


def test_repeated_runs_without_samples_give_an_interval_over_runs() -> None:
    a = [record("baseline", [_stated(1, v)], run_group="ga", suffix=f"a{i}00000") for i, v in enumerate((99, 100, 101))]
    b = [record("eagle3", [_stated(1, v)], run_group="gb", suffix=f"b{i}00000") for i, v in enumerate((129, 130, 131))]
    c = compare_records(a, b, n_boot=2000)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.lo is not None and m.ratio.hi is not None
    assert m.ratio.value == pytest.approx(1.3)
    # the extreme resamples: 129/101 and 131/99; the percentile interval lies inside them
    assert 129 / 101 <= m.ratio.lo < 1.3 < m.ratio.hi <= 131 / 99
    assert m.ratio.runs_a == 3 and m.ratio.n_a == 90  # 3 runs x 30 stated requests
    assert c.estimate == "bootstrap" and c.levels[0].winner == "b"
    assert c.verdict.startswith("eagle3 is faster than baseline")


# ---------------------------------------------------------------- 2. context


def _cross_pair() -> tuple[Any, Any]:
    base = record("baseline", [level(1, 100.0, seed=1)])
    cand = record(
        "eagle3",
        [level(1, 320.0, seed=2)],
        overrides={"server.engine": "vllm", "model.name": "other/model", "environment.gpu.model": "NVIDIA B200"},
    )
    return base, cand


def test_a_pair_that_differs_in_context_gets_the_table_but_no_verdict() -> None:
    # issue 9: records differing in engine, model and GPU read "... is faster ... 3.2x" with warnings
    base, cand = _cross_pair()
    c = compare_records([base], [cand], n_boot=200)
    assert not c.comparable and not c.cross_context
    assert c.context_fields == ("environment.gpu.model", "model.name", "server.engine")
    assert c.verdict.startswith("No verdict: baseline and eagle3 are not comparable.")
    assert "server.engine ('sglang' vs 'vllm')" in c.verdict and "3.2×" not in c.verdict
    assert "faster than" not in c.verdict
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.value == pytest.approx(3.2, rel=0.03)  # the table is still there
    assert c.levels[0].winner == "none"
    text = render_comparison_text(c)
    first = text.splitlines()[0]
    assert first.startswith("Not comparable: the records differ in 3 context field(s)")
    assert text.index("server.engine: 'sglang' vs 'vllm'") < text.index("Per-request tok/s")


@pytest.mark.parametrize("how", ["argument", "setting"])
def test_a_forced_cross_context_comparison_is_labelled(how: str) -> None:
    base, cand = _cross_pair()
    if how == "argument":
        c = compare_records([base], [cand], n_boot=200, cross_context=True)
    else:
        settings = Settings.model_validate(
            {"experiments": {"exp": {"title": "t", "baseline": "baseline", "cross_context": True}}}
        )
        c = compare_records([base], [cand], n_boot=200, settings=settings)
    assert c.cross_context and not c.comparable
    assert c.verdict.startswith("Cross-context comparison (forced): baseline and eagle3 differ in context")
    assert "eagle3 is faster than baseline" in c.verdict
    data = render_comparison_json(c)
    assert data["cross_context"] is True
    assert [d["field"] for d in data["context_differences"]] == list(c.context_fields)
    assert render_comparison_text(c).startswith("Cross-context comparison (forced)")


def test_forcing_changes_nothing_for_a_comparable_pair() -> None:
    base = record("baseline", [level(1, 100.0, seed=1)])
    cand = record("eagle3", [level(1, 150.0, seed=2)])
    c = compare_records([base], [cand], n_boot=200, cross_context=True)
    assert c.comparable and not c.cross_context and c.verdict.startswith("eagle3 is faster")


# ---------------------------------------------------------------- 3. minimum requests, pooled over runs


def _runs(variant: str, tok_s: float, n_runs: int, n: int, seed: int) -> list[Any]:
    return [
        record(variant, [level(1, tok_s, n=n, seed=seed + i)], run_group=f"g-{variant}", suffix=f"{variant[0]}{i}00000")
        for i in range(n_runs)
    ]


def test_three_runs_of_eight_requests_pool_to_twenty_four() -> None:
    # issue 9: repeats of 3 runs x 8 requests per side got "no verdict: fewer than 10 requests"
    c = compare_records(_runs("baseline", 100.0, 3, 8, 0), _runs("eagle3", 150.0, 3, 8, 10), n_boot=1000)
    assert c.excluded == ()
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.n_a == 24 and m.ratio.n_b == 24 and m.ratio.runs_a == 3
    assert m.evidence == "decided" and c.verdict.startswith("eagle3 is faster than baseline")


def test_one_run_of_eight_requests_gets_no_verdict() -> None:
    c = compare_records(_runs("baseline", 100.0, 1, 8, 0), _runs("eagle3", 150.0, 1, 8, 10), n_boot=1000)
    assert c.verdict == (
        "No verdict: no level that both state is usable: C=1 (baseline: fewer than 10 requests (8 in 1 run); "
        "candidate: fewer than 10 requests (8 in 1 run))."
    )
    strict = Settings(comparison=ComparisonSettings(min_requests=25))
    pooled = compare_records(_runs("baseline", 100.0, 3, 8, 0), _runs("eagle3", 150.0, 3, 8, 10), settings=strict)
    assert "fewer than 25 requests (24 in 3 runs)" in pooled.verdict


# ---------------------------------------------------------------- 4. failed levels


def test_a_failed_level_never_enters_a_comparison() -> None:
    failure = "error rate 80% above the threshold 10%"
    base = record("baseline", [level(1, 100.0, seed=1), level(4, 90.0, seed=2, failure=failure)])
    cand = record("eagle3", [level(1, 150.0, seed=3), level(4, 500.0, seed=4)])
    c = compare_records([base], [cand], n_boot=300)
    c4 = c.levels[1]
    assert c4.failed and c4.metrics == () and c4.winner == "none"
    assert [(e.name, e.reason) for e in c.excluded] == [("C=4", f"baseline: failed: {failure}")]
    assert c.verdict.startswith("eagle3 is faster than baseline at the one level both state (C=1).")
    assert c.verdict.endswith(f"Left out: C=4 (baseline: failed: {failure}).")
    assert "C=4 (failed)" in render_comparison_text(c)


def test_a_failed_run_is_dropped_and_the_others_are_compared() -> None:
    runs = _runs("baseline", 100.0, 3, 20, 0)
    bad = record(
        "baseline", [level(1, 5.0, n=20, seed=9, failure="server crashed")], run_group="g-baseline", suffix="b9000000"
    )
    c = compare_records([*runs, bad], _runs("eagle3", 150.0, 3, 20, 10), n_boot=500)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.runs_a == 3 and m.ratio.n_a == 60 and m.a == pytest.approx(100.0, rel=0.05)
    assert "C=1: baseline: 1 of 4 run(s) failed there; its other runs are compared" in c.notes


def test_failed_levels_are_not_in_regression_series() -> None:
    spec = figure("per_request_tok_s")
    good = [
        record("baseline", [_stated(1, 100.0)], suffix=f"{i}0000000", when=None) for i in range(4)
    ]  # the same time is fine: history orders by id then
    crashed = record("baseline", [_stated(1, 10.0, failure="crashed")], suffix="9000000")
    assert series_figure(crashed, spec, "1") is None
    found = flags([*good, crashed, crashed], RegressionThresholds())
    assert not [f for f in found if f.kind == "regression"]


# ---------------------------------------------------------------- 5. speculative: like with like


def _spec_level(rate: dict[str, Any] | None, length: dict[str, Any] | None) -> dict[str, Any]:
    spec = {k: v for k, v in (("acceptance_rate", rate), ("accept_length", length)) if v is not None}
    return level(1, 100.0, speculative=spec)


def _fig(value: float, unit: str) -> dict[str, Any]:
    return {"unit": unit, "formula": "f", "value": value}


def test_acceptance_rate_is_only_compared_with_acceptance_rate() -> None:
    base = record("ngram", [_spec_level(_fig(0.5, "ratio"), None)], speculative=True)
    cand = record("eagle3", [_spec_level(None, _fig(3.1, "tokens/step"))], speculative=True)
    c = compare_records([base], [cand], n_boot=100)
    rate, length = c.levels[0].metric("acceptance_rate"), c.levels[0].metric("accept_length")
    assert rate is not None and length is not None
    assert rate.ratio.value is None and length.ratio.value is None
    assert rate.note == (
        "only the baseline states it; the candidate states accept length instead, a different figure that is "
        "never converted"
    )
    assert length.note == (
        "only the candidate states it; the baseline states acceptance rate instead, a different figure that is "
        "never converted"
    )


def test_like_figures_are_compared_and_units_must_agree() -> None:
    base = record("ngram", [_spec_level(_fig(0.5, "ratio"), _fig(2.0, "tokens/step"))], speculative=True)
    cand = record("eagle3", [_spec_level(_fig(0.6, "ratio"), None)], speculative=True)
    c = compare_records([base], [cand], n_boot=100)
    rate = c.levels[0].metric("acceptance_rate")
    assert rate is not None and rate.ratio.value == pytest.approx(1.2) and rate.evidence == "indicative"
    length = c.levels[0].metric("accept_length")
    assert length is not None and length.note == (
        "only the baseline states it; the candidate states acceptance rate instead, a different figure that is "
        "never converted"
    )
    plain = record("baseline", [level(1, 100.0)], speculative=False)
    none = compare_records([plain], [base], n_boot=100).levels[0].metric("accept_length")
    assert none is not None and none.note == "only the candidate states it; the baseline states no accept length"
    pct = record("eagle3", [_spec_level(_fig(60.0, "%"), None)], speculative=True)
    mixed = compare_records([base], [pct], n_boot=100).levels[0].metric("acceptance_rate")
    assert mixed is not None and mixed.ratio.value is None
    assert mixed.note == "not compared: the records state it in different units (% vs ratio)"
    assert json.dumps(render_comparison_json(c))  # JSON-able
