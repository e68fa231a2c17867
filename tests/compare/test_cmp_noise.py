"""Repeated runs' spread (``bench.compare.repeat_spreads``): one spread per configuration with two or more runs,
level and speed figure that every run states; a failed level, a single run or a record outside a run group gives
none."""

from __future__ import annotations

import pytest
from cmp_fixtures import later, record

from bench.compare import fingerprint, repeat_spreads, spread_summary
from bench.record.model import Record


def _run(i: int, tok_s: dict[int, float], *, group: str | None = "g", failed: tuple[int, ...] = ()) -> Record:
    levels = [
        {
            "concurrency": c,
            "requests_completed": 30,
            "per_request_tok_s": {"unit": "tok/s", "formula": "per_request_tok_s", "mean": v},
            "failure": "error rate above the threshold" if c in failed else None,
        }
        for c, v in tok_s.items()
    ]
    return record("baseline", levels, when=later(i), suffix=f"{i:07x}", run_group=group)


def test_each_level_every_run_states_gives_one_spread() -> None:
    runs = [
        _run(0, {1: 100.0, 4: 50.0}),
        _run(1, {1: 110.0, 4: 55.0}, failed=(4,)),  # C=4 failed here: no spread at C=4
        _run(2, {1: 90.0, 4: 60.0}),
        _run(3, {1: 300.0}, group="alone"),  # a group of one run
        _run(4, {1: 500.0}, group=None),  # no group
    ]
    spreads = [s for s in repeat_spreads(runs) if s.metric == "per_request_tok_s"]
    assert [(s.run_group, s.level, s.figures) for s in spreads] == [("g", "C=1", (100.0, 110.0, 90.0))]
    assert spreads[0].spread == pytest.approx(110.0 / 90.0 - 1.0)
    summary = spread_summary(spreads)
    assert summary is not None and summary.n == 1 and summary.configurations == 1
    # the fingerprints may be given (memoised): the same spreads
    memo = {r.id: fingerprint(r) for r in runs}
    assert repeat_spreads(runs, fingerprint_of=lambda r: memo[r.id]) == repeat_spreads(runs)


def test_runs_of_another_context_are_another_configuration() -> None:
    a = _run(0, {1: 100.0})
    b = _run(1, {1: 120.0})
    other = record(
        "baseline",
        [
            {
                "concurrency": 1,
                "requests_completed": 30,
                "per_request_tok_s": {"unit": "tok/s", "formula": "per_request_tok_s", "mean": 80.0},
            }
        ],
        when=later(2),
        suffix="0000002",
        run_group="g",
        overrides={"environment.gpu.model": "NVIDIA B200"},
    )
    spreads = [s for s in repeat_spreads([a, b, other]) if s.metric == "per_request_tok_s"]
    assert [s.figures for s in spreads] == [(100.0, 120.0)]
