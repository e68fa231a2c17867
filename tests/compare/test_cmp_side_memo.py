"""compare_records with a kept side memo (the site's: a baseline meets every other variant) gives exactly the
comparisons computed afresh, and bootstraps each side once."""

from __future__ import annotations

from unittest import mock

import pytest
from cmp_fixtures import later, level, record
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.compare import SideMemo, _interval, compare_records, render_comparison_json
from bench.record.model import Record


def _side(variant: str, speeds: list[float], repeats: int, seed: int) -> list[Record]:
    return [
        record(
            variant,
            [level(c, s * (1 + 0.03 * r), seed=seed + 7 * r + c) for c, s in zip((1, 4, 16), speeds, strict=False)],
            when=later(r),
            run_group="g",
            suffix=f"{seed % 97:03d}{r:04d}",
        )
        for r in range(repeats)
    ]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.floats(20, 200), min_size=1, max_size=3),
    st.lists(
        st.tuples(st.lists(st.floats(20, 200), min_size=1, max_size=3), st.integers(1, 3)), min_size=1, max_size=3
    ),
    st.integers(1, 2),
)
def test_kept_sides_give_the_fresh_comparisons(
    base_speeds: list[float], candidates: list[tuple[list[float], int]], base_repeats: int
) -> None:
    base = _side("baseline", base_speeds, base_repeats, 1)
    cands = [_side(f"v{i}", s, n, 100 + 10 * i) for i, (s, n) in enumerate(candidates)]
    memo: SideMemo = {}
    for cand in cands:
        fresh = compare_records(base, cand, n_boot=200)
        kept = compare_records(base, cand, n_boot=200, side_memo=memo)
        assert render_comparison_json(kept) == render_comparison_json(fresh)
        assert kept == fresh


def test_a_baseline_is_bootstrapped_once_for_all_its_comparisons() -> None:
    base = _side("baseline", [100.0, 90.0, 80.0], 2, 1)
    cands = [_side(f"v{i}", [120.0, 100.0, 70.0], 2, 50 + i) for i in range(3)]
    memo: SideMemo = {}
    with mock.patch.object(_interval, "side_figures_many", wraps=_interval.side_figures_many) as many:
        for cand in cands:
            compare_records(base, cand, n_boot=200, side_memo=memo)
    jobs = [len(call.args[0]) for call in many.call_args_list]
    assert jobs == [3, 3, 0, 3, 0, 3]  # the baseline's three levels once, each candidate's three
    assert {k[0][0] for k in memo} == {tuple(r.id for r in base), *(tuple(r.id for r in c) for c in cands)}


def test_the_same_runs_on_both_sides_keep_their_own_draws() -> None:
    base = _side("baseline", [100.0, 90.0], 2, 3)
    cand = _side("v1", [110.0, 95.0], 2, 9)
    memo: SideMemo = {}
    compare_records(base, cand, n_boot=200, side_memo=memo)  # the baseline's side "a" kept
    for a, b in ((cand, base), (base, base)):  # now also as side "b"
        kept = compare_records(a, b, n_boot=200, side_memo=memo)
        assert render_comparison_json(kept) == render_comparison_json(compare_records(a, b, n_boot=200))


def test_the_memo_keeps_at_most_sides_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_interval, "SIDES_KEPT", 2)
    base = _side("baseline", [100.0, 90.0, 80.0], 1, 4)
    cands = [_side(f"v{i}", [120.0, 100.0, 70.0], 1, 60 + i) for i in range(2)]
    memo: SideMemo = {}
    for cand in cands * 2:
        kept = compare_records(base, cand, n_boot=200, side_memo=memo)
        assert render_comparison_json(kept) == render_comparison_json(compare_records(base, cand, n_boot=200))
        assert len(memo) <= 2
