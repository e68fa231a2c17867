from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.compare._bootstrap import RunValues, bootstrap_ratio, bootstrap_side, stream

values = st.lists(st.floats(min_value=1.0, max_value=1000.0, allow_nan=False), min_size=10, max_size=60)


def _ratio(a: list[RunValues], b: list[RunValues], seed: int = 0) -> tuple[float, float, float]:
    ra = bootstrap_side(a, 300, stream(seed, "a"))
    rb = bootstrap_side(b, 300, stream(seed, "b"))
    out = bootstrap_ratio(ra, rb)
    assert out is not None
    return out


@settings(max_examples=40, deadline=None)
@given(values, st.sampled_from(["mean", "rate"]), st.integers(0, 2**16))
def test_identical_pair_interval_contains_one(xs: list[float], kind: str, seed: int) -> None:
    run = RunValues(xs, kind, duration_s=10.0)  # type: ignore[arg-type]
    point, lo, hi = _ratio([run], [run], seed)
    assert point == pytest.approx(1.0)
    assert lo <= 1.0 <= hi


@settings(max_examples=40, deadline=None)
@given(values, st.floats(min_value=1.5, max_value=4.0), st.integers(0, 2**16))
def test_clearly_shifted_pair_interval_excludes_one(xs: list[float], factor: float, seed: int) -> None:
    # a tight distribution around the drawn centre, then the candidate shifted by at least 1.5x
    centre = float(np.median(xs))
    base = [centre * (1 + 0.05 * ((i % 7) - 3) / 3) for i in range(len(xs))]
    shifted = [x * factor for x in base]
    point, lo, hi = _ratio([RunValues(base, "mean")], [RunValues(shifted, "mean")], seed)
    assert point == pytest.approx(factor)
    assert 1.0 < lo <= hi


def test_seeded_draws_are_reproducible() -> None:
    run = [RunValues([1.0, 2.0, 3.0, 4.0, 10.0] * 4, "mean")]
    a = bootstrap_side(run, 200, stream(7, "x")).draws
    b = bootstrap_side(run, 200, stream(7, "x")).draws
    c = bootstrap_side(run, 200, stream(8, "x")).draws
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_rate_scales_resampled_tokens_by_duration() -> None:
    run = RunValues([100.0] * 20, "rate", duration_s=4.0)
    res = bootstrap_side([run], 50, stream(0))
    assert res.point == pytest.approx(500.0)
    assert np.allclose(res.draws, 500.0)


def test_hierarchical_bootstrap_carries_run_to_run_spread() -> None:
    # three runs with identical within-run spread but different levels: the interval must widen
    runs = [RunValues([m + d for d in (-1.0, 0.0, 1.0) * 10], "mean") for m in (90.0, 100.0, 110.0)]
    one = bootstrap_side(runs[1:2], 500, stream(0))
    many = bootstrap_side(runs, 500, stream(0))
    assert many.point == pytest.approx(100.0)
    assert many.n_runs == 3 and many.n_requests == 90
    assert np.std(many.draws) > 5 * np.std(one.draws)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="duration"):
        RunValues([1.0], "rate")
    with pytest.raises(ValueError, match="at least one"):
        RunValues([], "mean")
    with pytest.raises(ValueError):
        bootstrap_side([], 10, stream(0))
