"""The bootstrap's draws as one matrix of counts per run: the same method as resampling request indices, exact
products (the same numbers in any batch and any BLAS block), independent streams, kept intervals equal fresh ones."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cmp_fixtures import level, record
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bench.compare._bootstrap as boot
from bench.compare import (
    RatioIntervals,
    compare_records,
    forget_resamples,
    level_interval,
    level_intervals,
    level_intervals_many,
)
from bench.compare._bootstrap import (
    RunValues,
    _product,
    bootstrap_many,
    bootstrap_side,
    bootstrap_sides,
    exact_columns,
    percentiles,
    rng_for,
    stream,
)
from bench.dataframe import frame_rows
from bench.figures import figure
from bench.record.load import load_record

ROOT = Path(__file__).resolve().parents[2]


def test_counts_are_the_classic_resample_of_request_indices() -> None:
    # W's row i counts how often each request was drawn in resample i: a mean and a throughput from W are exactly
    # the statistic of those resampled requests (percentile bootstrap, requests with replacement)
    g = np.random.default_rng(5)
    values, times = g.lognormal(3, 0.5, 37), g.uniform(0.5, 2.0, 37)
    src = stream(3, "x")
    w = src.weights(0, 37, 500)
    idx = rng_for(3, "x", "requests", "0", "37").integers(0, 37, size=(500, 37))
    assert (w.sum(axis=1) == 37).all()
    assert np.array_equal(w, np.stack([np.bincount(row, minlength=37) for row in idx]).astype(float))
    mean = bootstrap_side([RunValues(values.tolist(), "mean")], 500, src)
    assert np.allclose(mean.draws, values[idx].mean(axis=1), rtol=1e-12)
    rate = bootstrap_side([RunValues(values.tolist(), "rate", duration_s=9.0, times=times.tolist())], 500, src)
    expected = values[idx].sum(axis=1) / (9.0 * times[idx].sum(axis=1) / times.sum())
    assert np.allclose(rate.draws, expected, rtol=1e-12)
    assert mean.point == values.mean() and rate.point == pytest.approx(values.sum() / 9.0, rel=1e-15)


def test_figures_of_every_kind_in_one_block_are_each_their_own_statistic() -> None:
    # a mean, a rate scaled by its times and a rate over a fixed duration of one run, drawn together (one product):
    # each is the classic statistic of the resampled requests, as when drawn alone
    g = np.random.default_rng(6)
    values, other, times = g.lognormal(3, 0.5, 29), g.lognormal(1, 0.2, 29), g.uniform(0.5, 2.0, 29)
    src = stream(4, "mixed")
    idx = rng_for(4, "mixed", "requests", "0", "29").integers(0, 29, size=(300, 29))
    figures = [
        [RunValues(values.tolist(), "mean")],
        [RunValues(values.tolist(), "rate", duration_s=9.0, times=times.tolist())],
        [RunValues(other.tolist(), "rate", duration_s=4.0)],
        [RunValues(other.tolist(), "mean")],
    ]
    mean, timed, fixed, mean2 = bootstrap_sides(figures, 300, src)
    assert np.allclose(mean.draws, values[idx].mean(axis=1), rtol=1e-12)
    assert np.allclose(timed.draws, values[idx].sum(axis=1) / (9.0 * times[idx].sum(axis=1) / times.sum()), rtol=1e-12)
    assert np.allclose(fixed.draws, other[idx].sum(axis=1) / 4.0, rtol=1e-12)
    assert np.allclose(mean2.draws, other[idx].mean(axis=1), rtol=1e-12)
    for fig, got in zip(figures, (mean, timed, fixed, mean2), strict=True):
        alone = bootstrap_side(fig, 300, src)
        assert alone.point == got.point and np.array_equal(alone.draws, got.draws)


def test_hierarchical_draws_resample_runs_then_requests() -> None:
    g = np.random.default_rng(8)
    runs = [g.normal(m, 3.0, n) for m, n in ((100, 20), (110, 25), (95, 20))]
    src = stream(0, "a")
    res = bootstrap_side([RunValues(r.tolist(), "mean") for r in runs], 400, src)
    per_run = np.stack([src.weights(i, len(r), 400) @ r / len(r) for i, r in enumerate(runs)])
    chosen = src.runs(3, 400)
    expected = per_run[chosen, np.arange(400)[:, None]].mean(axis=1)
    assert np.allclose(res.draws, expected, rtol=1e-12) and res.n_runs == 3 and res.n_requests == 65


def test_streams_and_run_positions_draw_independently() -> None:
    a, b = stream(0, "a"), stream(0, "b")
    assert not np.array_equal(a.weights(0, 50, 200), b.weights(0, 50, 200))  # the two sides of a ratio
    assert not np.array_equal(a.weights(0, 50, 200), a.weights(1, 50, 200))  # two runs of one side
    assert np.array_equal(a.weights(0, 50, 200), stream(0, "a").weights(0, 50, 200))  # seeded: the same again


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e9, allow_nan=False), min_size=2, max_size=300),
    st.integers(0, 2**16),
)
@example(xs=[0.0, 2.2250738585e-313], seed=0)  # a subnormal row: found by CI, its quantum underflowed to 0
@example(xs=[5e-324, 5e-324, 0.0], seed=1)  # the smallest float64
def test_exact_columns_make_every_product_order_free(xs: list[float], seed: int) -> None:
    n = len(xs)
    x = np.asarray([xs, [v * 0.37 + 1.0 for v in xs]])
    exact = exact_columns(x, n)
    top = np.max(np.abs(x), axis=1, keepdims=True)
    assert (np.abs(exact - x) <= top * 2.0 ** -(52 - np.ceil(np.log2(n + 1)))).all()  # rounded, barely
    w = stream(seed).weights(0, n, 300)
    full = w @ exact.T
    # gemv per column, single rows, blocks of rows: BLAS adds in other orders; an exact sum has one value
    assert np.array_equal(full[:, 0], w @ exact[0])
    assert np.array_equal(full, np.concatenate([w[i : i + 1] @ exact.T for i in range(300)]))
    assert np.array_equal(full, np.concatenate([w[i : i + 7] @ exact.T for i in range(0, 300, 7)]))


def test_products_in_blocks_equal_one_product(monkeypatch: pytest.MonkeyPatch) -> None:
    g = np.random.default_rng(2)
    w = stream(1).weights(0, 384, 2000)
    x = exact_columns(g.lognormal(2, 1, (40, 384)), 384).T
    assert np.array_equal(_product(w, x), w @ x)
    monkeypatch.setattr(boot, "_one_thread", False)  # as where BLAS could not be kept on one thread
    monkeypatch.setattr(boot, "PRODUCT_SIZE", 5000)  # tiny blocks: many rows and column blocks
    calls: list[tuple[int, ...]] = []

    class Spy(np.ndarray):
        def __matmul__(self, other: Any) -> Any:
            calls.append((*self.shape, *other.shape))
            return np.asarray(self) @ other

    assert np.array_equal(_product(w.view(Spy), x), w @ x)
    assert len(calls) > 1 and all(a * b * d <= 5000 for a, b, _, d in calls)


def test_openblas_is_kept_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # NumPy's wheels (the project's pinned NumPy) bring OpenBLAS: found, and set to one thread once, which a forked
    # child (a site build's worker) keeps
    assert "openblas" in np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    found = boot.openblas_threads()
    assert found is not None
    set_threads, get_threads = found
    set_threads(2)
    assert get_threads() == 2
    monkeypatch.setattr(boot, "_one_thread", None)
    assert boot.blas_on_one_thread() and get_threads() == 1
    set_threads(2)
    assert boot.blas_on_one_thread() and get_threads() == 2  # once per process: not set again
    monkeypatch.setattr(boot, "_one_thread", None)
    assert boot.blas_on_one_thread()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write, str(get_threads()).encode())
        os._exit(0)
    os.close(write)
    assert os.read(read, 8) == b"1"
    os.waitpid(pid, 0)
    os.close(read)


def test_a_batch_gives_each_side_exactly_its_own_draws() -> None:
    g = np.random.default_rng(4)

    def side(n: int, runs: int) -> list[list[RunValues]]:
        vals = [g.lognormal(4, 0.3, n).tolist() for _ in range(runs)]
        ts = [g.uniform(1, 3, n).tolist() for _ in range(runs)]
        return [
            [RunValues(v, "mean") for v in vals],
            [RunValues(v, "rate", duration_s=5.0, times=t) for v, t in zip(vals, ts, strict=True)],
            [RunValues(v[: n - 3], "mean") for v in vals],  # a figure on fewer requests (TPOT's kind)
        ]

    jobs = [side(48, 1), side(96, 2), side(48, 3), side(16, 1)]
    src = stream(0, "interval")
    together = bootstrap_many(jobs, 2000, src)
    assert boot._BANK.size > 0
    assert forget_resamples() > 0 and boot._BANK.size == 0  # kept matrices are a pure function of their key
    for job, got in zip(jobs, together, strict=True):
        alone = bootstrap_sides(job, 2000, src)
        for a, b in zip(alone, got, strict=True):
            assert a.point == b.point and np.array_equal(a.draws, b.draws)


def _one_run_draws(rv: RunValues, n_boot: int, src: Any) -> tuple[float, np.ndarray]:
    """The point and draws of one run's figure from first principles: the run's counts matrix times its values on
    the exact grid (so any order of the product gives these numbers), divided as the figure's kind says."""
    n = len(rv.values)
    w = src.weights(0, n, n_boot)
    values = np.asarray(rv.values, dtype=np.float64)
    drawn = w @ exact_columns(values[None, :], n)[0]
    if rv.kind == "mean":
        return float(values.sum() / n), drawn / n
    assert rv.duration_s
    point = float(values.sum() / rv.duration_s)
    if rv.times is None:
        return point, drawn / rv.duration_s
    times = exact_columns(np.asarray(rv.times, dtype=np.float64)[None, :], n)[0]
    return point, drawn / (rv.duration_s * (w @ times) / times.sum())


def test_sides_of_one_run_made_together_are_each_sides_own_statistic(monkeypatch: pytest.MonkeyPatch) -> None:
    # a site build's levels: one run each, every figure on the level's requests; made in a few array operations for
    # all of them (grouped by request count), each figure gets exactly the draws of its own statistic (==)
    g = np.random.default_rng(7)

    def side(n: int, duration: float) -> list[list[RunValues]]:
        vals, tok = g.lognormal(4, 0.3, n).tolist(), g.integers(1, 300, n).astype(float).tolist()
        times = g.uniform(0.5, 3, n).tolist()
        return [
            [RunValues(vals, "mean")],
            [RunValues(tok, "rate", duration_s=duration, times=times)],
            [RunValues(vals, "rate", duration_s=duration, times=times)],  # the same times: one column
            [RunValues(tok, "rate", duration_s=duration)],  # no times: the duration as it is
            [RunValues(g.lognormal(1, 1, n).tolist(), "mean")],
        ]

    jobs = [side(n, float(g.uniform(1, 9))) for n in (48, 48, 96, 48, 7, 96)] + [[[RunValues([3.0], "mean")]]]
    two_runs = [[RunValues([1.0, 2.0], "mean"), RunValues([4.0, 1.0], "mean")]]  # the hierarchical path beside them
    jobs.append(two_runs)
    src = stream(3, "interval")
    calls: list[int] = []
    real = boot._single_run_results

    def counting(block: Any, sums: Any, sides: Any) -> Any:
        calls.append(len(sides))
        return real(block, sums, sides)

    monkeypatch.setattr(boot, "_single_run_results", counting)
    together = bootstrap_many(jobs, 2000, src)
    assert sorted(calls) == [1, 1, 2, 3]  # by request count: 1, 7, 96 (twice), 48 (three times)
    for job, got in zip(jobs[:-1], together[:-1], strict=True):
        assert len(got) == len(job)
        for (rv,), res in zip(job, got, strict=True):
            point, draws = _one_run_draws(rv, 2000, src)
            assert (res.point, res.n_requests, res.n_runs) == (point, len(rv.values), 1)
            assert np.array_equal(res.draws, draws) and res.draws.flags.c_contiguous
    (hier,) = together[-1]
    assert hier.n_runs == 2 and np.array_equal(hier.draws, bootstrap_side(two_runs[0], 2000, src).draws)


def test_a_levels_times_are_one_column_of_the_product(monkeypatch: pytest.MonkeyPatch) -> None:
    # every rate figure of a level scales by the same E2E times: the product holds them once, and each figure still
    # gets the draws it gets alone (there, its own column)
    recs = [load_record(p).record for p in sorted((ROOT / "records" / "h200-ngram").glob("*.json"))[:2]]
    keys = ["total_throughput", "output_throughput", "per_request_tok_s", "ttft_ms"]
    levels = [lv for r in recs for lv in r.levels if lv.samples is not None and lv.duration_s]
    widths: list[int] = []
    real = boot._product

    def product(w: np.ndarray, x: np.ndarray) -> np.ndarray:
        widths.append(x.shape[1])
        return real(w, x)

    monkeypatch.setattr(boot, "_product", product)
    together = level_intervals_many([(keys, [lv]) for lv in levels])
    rates = [k for k in keys if figure(k).kind == "rate" and figure(k).share_of is None]
    assert len(rates) >= 2 and levels
    # one column per figure's values and one for the level's times (levels of equal request counts share a block)
    blocks: dict[int, int] = {}
    for lv in levels:
        assert lv.samples is not None
        blocks[len(lv.samples.e2e_ms)] = blocks.get(len(lv.samples.e2e_ms), 0) + len(keys) + 1
    assert sorted(widths) == sorted(blocks.values())
    assert together == [level_intervals(keys, [lv]) for lv in levels]


def test_frame_intervals_do_not_depend_on_the_batch() -> None:
    recs = [load_record(p).record for p in sorted((ROOT / "records" / "h200-ngram").glob("*.json"))[:4]]
    together = frame_rows(recs)
    for r in recs:
        alone = frame_rows([r])
        mine = [row for row in together if row["record_id"] == r.id]
        assert alone == mine
        for row, lv in zip(alone, r.levels, strict=True):
            keys = [k for k in ("per_request_tok_s", "total_throughput", "ttft_ms", "tpot_ms") if row[k] is not None]
            assert "per_request_tok_s" in keys
            for key in keys:  # the interval of the level alone, around the figure the record states
                iv = level_interval(key, [lv])
                assert iv is not None and (row[f"{key}_lo"], row[f"{key}_hi"]) == (iv.lo, iv.hi)
                assert iv.lo < row[key] < iv.hi
    assert len(together) > 20
    many = level_intervals_many([(["ttft_ms", "total_throughput"], [lv]) for lv in recs[0].levels])
    assert many == [level_intervals(["ttft_ms", "total_throughput"], [lv]) for lv in recs[0].levels]


def _pair() -> tuple[list[object], list[object]]:
    base = [
        record("baseline", [level(c, 100.0, n=40, seed=c) for c in (1, 8)], run_group="g1", suffix=f"a{i}" * 3 + "a")
        for i in range(2)
    ]
    cand = [
        record("eagle", [level(c, 120.0, n=40, seed=50 + c) for c in (1, 8)], run_group="g2", suffix=f"b{i}" * 3 + "b")
        for i in range(2)
    ]
    return base, cand  # type: ignore[return-value]


def test_kept_ratio_intervals_give_the_same_comparison_without_a_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    base, cand = _pair()
    kept: RatioIntervals = {}
    fresh = compare_records(base, cand, ratio_intervals=kept)  # type: ignore[arg-type]
    assert set(kept) == {"1", "8"} and all(v is not None for lv in kept.values() for v in lv["ratios"].values())
    m = fresh.levels[1].metric("per_request_tok_s")
    assert m is not None and kept["8"]["ratios"]["per_request_tok_s"] == [m.ratio.lo, m.ratio.hi]
    assert kept["8"]["a"]["per_request_tok_s"] == [m.a, 80, 2, "requests", False]  # 2 runs of 40 requests

    def not_again(*args: object, **kwargs: object) -> object:
        raise AssertionError("computed again although every figure and interval was given")

    monkeypatch.setattr("bench.compare._interval.bootstrap_many", not_again)
    monkeypatch.setattr("bench.compare._interval.run_values", not_again)
    again = compare_records(base, cand, ratio_intervals=json.loads(json.dumps(kept)))  # type: ignore[arg-type]
    assert again == fresh
    monkeypatch.undo()
    # a level lacking a figure's interval is bootstrapped again, with or without its sides kept
    partial: RatioIntervals = json.loads(json.dumps(kept))
    del partial["8"]["ratios"]["ttft_ms"]
    partial["1"] = {"ratios": {"ttft_ms": kept["1"]["ratios"]["ttft_ms"]}}
    assert compare_records(base, cand, ratio_intervals=partial) == fresh  # type: ignore[arg-type]
    assert partial == kept


def test_exact_columns_keep_subnormal_and_zero_rows_as_they_are() -> None:
    x = np.asarray([[0.0, 2.2250738585e-313, 5e-324], [0.0, 0.0, 0.0]])
    exact = exact_columns(x, 3)
    assert np.isfinite(exact).all()
    assert np.array_equal(exact, x)  # already on the finest grid there is


_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e-300, 5e-324, 1e300]),  # ties, zeros, subnormals, huge values
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.integers(1, 60).flatmap(
        lambda n: st.lists(st.lists(_FLOATS, min_size=n, max_size=n), min_size=1, max_size=4)
    ),
    percents=st.lists(
        st.one_of(st.floats(0.0, 100.0), st.sampled_from([0.0, 2.5, 5.0, 50.0, 95.0, 97.5, 100.0])),
        min_size=1,
        max_size=4,
    ),
)
@example(rows=[[3.0, 1.0, 2.0]], percents=[2.5, 97.5])
def test_percentiles_are_numpys(rows: list[list[float]], percents: list[float]) -> None:
    # the intervals' percentiles from sorted rows: what np.percentile gives, NaN where a row holds one
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN in both, with NumPy's warning
        got = percentiles(np.array(rows), percents)
        want = np.percentile(np.array(rows), percents, axis=1)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)


def test_percentiles_of_many_draws_are_numpys() -> None:
    g = np.random.default_rng(11)
    for n in (1, 2, 7, 2000, 2001):
        rows = g.lognormal(3, 1, (9, n))
        rows[2] = rows[2].round(1)  # ties
        rows[3] = 5.0  # one value
        for percents in ([2.5, 97.5], [5.0, 95.0], [0.5, 99.5], [0.0, 50.0, 100.0]):
            assert np.array_equal(percentiles(rows, percents), np.percentile(rows, percents, axis=1))
    with pytest.raises(ValueError, match="percents"):
        percentiles(np.ones((1, 3)), [101.0])
