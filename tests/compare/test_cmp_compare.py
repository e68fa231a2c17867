from __future__ import annotations

import pytest
from cmp_fixtures import lab_records, level, record

from bench.compare import compare_records, context_warnings, render_comparison_json
from bench.record.model import Record
from bench.settings import ComparisonSettings, Settings

# The transcribed lab notes hold one figure per level and run: point estimates, so indicative, never "faster".
LAB_VERDICT = (
    "Indicative only: no compared ratio has an interval (the records hold neither per-request samples nor "
    "repeated runs), so neither side is shown to be faster. "
    "At C=1 the point estimates favour baseline by 15% in per-request tok/s (92.7 vs 80.9 tok/s, no interval); "
    "at saturation the point estimates favour baseline by 2.2× in total throughput (≈773 vs ≈354 tok/s, "
    "no interval)."
)

CROSSOVER_VERDICT = (
    "eagle3 is faster at C=1 and C=4; baseline is faster at C=16 and C=64. "
    "The lead crosses over between C=4 and C=16, where baseline takes over. "
    "At C=1 eagle3 leads by 50% in per-request tok/s (150 vs 100 tok/s; ratio 1.50, 95% interval 1.46–1.53); "
    "at C=64 baseline leads by 2.0× in total throughput (8,166 vs 3,989 tok/s; ratio 0.49, 95% interval 0.48–0.50). "
    "A side is called faster only where the 95% bootstrap interval of the ratio lies entirely beyond the ±5% "
    "noise floor."
)


def _crossover_pair():
    base = record(
        "baseline", [level(1, 100.0, seed=1), level(4, 90.0, seed=2), level(16, 70.0, seed=3), level(64, 50.0, seed=4)]
    )
    cand = record(
        "eagle3", [level(1, 150.0, seed=5), level(4, 110.0, seed=6), level(16, 50.0, seed=7), level(64, 25.0, seed=8)]
    )
    return base, cand


def test_lab_notes_verdict_golden() -> None:
    base, eagle = lab_records()
    c = compare_records([base], [eagle], n_boot=50)
    assert c.verdict == LAB_VERDICT
    assert c.estimate == "point"
    assert c.warnings == ()  # they differ only in the treatment (speculation, draft model)
    assert [lv.key for lv in c.levels] == ["1", "saturation"]  # saturation matched by label
    c1 = c.levels[0].metric("per_request_tok_s")
    assert c1 is not None and c1.a == 92.7 and c1.b == 80.9
    assert c1.ratio.value == pytest.approx(80.9 / 92.7) and not c1.ratio.has_interval
    sat = c.levels[1].metric("total_throughput")
    assert sat is not None and sat.approximate and sat.ratio.value == pytest.approx(354 / 773)
    assert "no per-request samples" in (sat.note or "")
    assert all(lv.winner == "indicative" for lv in c.levels)
    assert all(m.evidence == "indicative" and not m.decided for lv in c.levels for m in lv.metrics)


def test_lab_notes_say_what_neither_states() -> None:
    c = compare_records(*([r] for r in lab_records()), n_boot=50)
    note = next(n for n in c.notes if n.startswith("neither side states"))
    assert "model.name" in note and "server.tp" in note
    assert "speculative" not in note  # treatment fields are expected to differ


def test_crossover_verdict_golden() -> None:
    base, cand = _crossover_pair()
    c = compare_records([base], [cand], n_boot=300, seed=0)
    assert c.verdict == CROSSOVER_VERDICT
    assert [lv.winner for lv in c.levels] == ["b", "b", "a", "a"]
    assert c.estimate == "bootstrap"
    for lv in c.levels:
        m = lv.metric("per_request_tok_s")
        assert m is not None and m.ratio.resolved and m.ratio.n_a == 40 and m.ratio.n_b == 40
        assert m.evidence == "decided"


def test_results_are_reproducible_for_a_seed() -> None:
    base, cand = _crossover_pair()
    one = render_comparison_json(compare_records([base], [cand], n_boot=100, seed=3))
    two = render_comparison_json(compare_records([base], [cand], n_boot=100, seed=3))
    assert one == two


def test_overlapping_intervals_are_not_resolved() -> None:
    base = record("baseline", [level(1, 100.0, seed=1), level(8, 80.0, seed=2)])
    cand = record("eagle3", [level(1, 104.0, seed=3), level(8, 40.0, seed=4)])
    c = compare_records([base], [cand], n_boot=300)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and m.ratio.lo is not None and m.ratio.hi is not None
    assert m.ratio.lo < 1.05 < m.ratio.hi  # straddles the edge of the noise floor: neither inside nor beyond
    assert c.levels[0].winner == "unresolved"
    assert c.verdict.startswith("The difference is not resolved at C=1; baseline is faster at C=8.")
    assert "At C=1 the difference in per-request tok/s is not resolved (ratio 1." in c.verdict
    assert "baseline is faster at C=8" in c.verdict


def test_incomparable_pair_warns_on_exactly_the_differing_fields() -> None:
    base = record("baseline", [level(1, 100.0)])
    cand = record(
        "eagle3",
        [level(1, 120.0)],
        overrides={
            "environment.gpu.count": 4,
            "workload.temperature": 0.7,
            "environment.env_vars": {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL"},
            "model.name": None,
            "environment.info": {"hostname": "elsewhere"},  # info: shown, never a warning
            "server.args.cuda-graph-max-bs": 2,  # info
        },
    )
    c = compare_records([base], [cand], n_boot=50)
    got = {w.field: (w.a, w.b) for w in c.warnings}
    assert got == {
        "environment.gpu.count": (8, 4),
        "workload.temperature": (0.0, 0.7),
        "environment.env_vars.NCCL_ALGO": ("Ring", "Tree"),
        "environment.env_vars.NCCL_PROTO": (None, "LL"),
        "model.name": ("meta-llama/Llama-3.1-8B-Instruct", None),
    }
    messages = [w.message for w in c.warnings]
    assert "context differs beyond the treatment: model.name is 'meta-llama/Llama-3.1-8B-Instruct' vs not stated" in (
        messages
    )
    assert not c.comparable
    info = {d.field for d in c.info_differences}
    assert {"environment.info.hostname", "server.args.cuda-graph-max-bs"} <= info


def test_treatment_is_per_experiment() -> None:
    base = record("baseline", [level(1, 100.0)])
    cand = record("eagle3", [level(1, 120.0)])
    assert compare_records([base], [cand], n_boot=20).warnings == ()
    narrow = Settings.model_validate(
        {"experiments": {"exp": {"title": "t", "baseline": "baseline", "treatment": ["speculative.algorithm"]}}}
    )
    fields = {w.field for w in compare_records([base], [cand], settings=narrow, n_boot=20).warnings}
    assert fields == {
        "draft_model.name",
        "speculative.num_steps",
        "speculative.topk",
        "speculative.num_draft_tokens",
        "server.args.speculative-algorithm",
    }
    assert {w.field for w in context_warnings(base, cand, ())} >= fields | {"speculative.algorithm"}


def test_small_and_flagged_levels_are_left_out_of_the_verdict() -> None:
    base = record(
        "baseline",
        [
            level(1, 100.0, seed=1),
            level(2, 95.0, n=5, seed=2),
            level(4, 90.0, seed=3, errors={"error_rate": 0.4, "flagged": True}),
        ],
    )
    cand = record("eagle3", [level(1, 140.0, seed=4), level(2, 10.0, n=30, seed=5), level(4, 10.0, seed=6)])
    c = compare_records([base], [cand], n_boot=100)
    reasons = {e.key: e.reason for e in c.excluded}
    assert reasons == {
        "2": "baseline: fewer than 10 requests (5 in 1 run)",
        "4": "baseline: error rate flagged (40%)",
    }
    assert c.verdict.startswith("eagle3 is faster than baseline at the one level both state (C=1).")
    assert c.verdict.endswith(
        "Left out: C=2 (baseline: fewer than 10 requests (5 in 1 run)) and C=4 (baseline: error rate flagged (40%))."
    )
    assert "C=4" not in c.verdict.split("Left out")[0]
    strict = Settings(comparison=ComparisonSettings(min_requests=50))
    assert "No verdict" in compare_records([base], [cand], settings=strict, n_boot=20).verdict


def test_levels_only_one_side_states_are_named() -> None:
    base = record("baseline", [level(1, 100.0), level(2, 90.0)])
    cand = record("eagle3", [level(1, 120.0), level(8, 60.0)])
    c = compare_records([base], [cand], n_boot=20)
    assert c.only_in_a == ("2",) and c.only_in_b == ("8",)
    assert [lv.key for lv in c.levels] == ["1"]


def test_several_runs_use_the_hierarchical_bootstrap() -> None:
    runs_a = [
        record("baseline", [level(1, r, seed=i)], run_group="g1", suffix=f"a{i}bcdef")
        for i, r in enumerate((95.0, 100.0, 105.0))
    ]
    one = compare_records(runs_a[1:2], [record("eagle3", [level(1, 100.0, seed=9)])], n_boot=400)
    many = compare_records(runs_a, [record("eagle3", [level(1, 100.0, seed=9)])], n_boot=400)
    m1, m3 = one.levels[0].metric("per_request_tok_s"), many.levels[0].metric("per_request_tok_s")
    assert m1 is not None and m3 is not None
    assert m3.ratio.runs_a == 3 and m3.ratio.n_a == 120
    assert m3.ratio.hi - m3.ratio.lo > m1.ratio.hi - m1.ratio.lo  # type: ignore[operator]


def test_runs_of_different_configurations_are_noted() -> None:
    a1 = record("baseline", [level(1, 100.0)])
    a2 = record("baseline", [level(1, 100.0)], overrides={"environment.gpu.count": 4}, suffix="bbbbbbb")
    c = compare_records([a1, a2], [record("eagle3", [level(1, 90.0)])], n_boot=20)
    assert any("not one configuration" in n and "environment.gpu.count" in n for n in c.notes)


def test_one_side_without_samples_gives_a_point_estimate() -> None:
    base, _ = lab_records()
    cand = record("eagle3", [level(1, 90.0, per_request_tok_s={"unit": "tok/s", "formula": "f", "mean": 90.0})])
    c = compare_records([base], [cand], n_boot=20)
    m = c.levels[0].metric("per_request_tok_s")
    assert m is not None and not m.ratio.has_interval
    assert m.note == (
        "point estimate, no interval: the baseline records hold no per-request samples and no repeated runs"
    )
    assert m.evidence == "indicative"


def test_empty_sides_are_refused() -> None:
    with pytest.raises(ValueError):
        compare_records([], [record("eagle3", [level(1, 1.0)])])


def _served(variant: str, extra: dict[str, object]) -> Record:
    return record(
        variant,
        [level(1, 100.0), level(8, 90.0, seed=1)],
        speculative=False,
        overrides={"server.observed": {"engine": "sglang", "extra": extra}},
    )


def test_capacity_the_servers_reported_is_named_when_it_differs() -> None:
    """The first H200 session's baseline and NGRAM servers held KV pools of 54,498 and 1,685,319 tokens (same
    --mem-fraction-static); a comparison of them must say so, and one of equal servers must not."""
    small = _served("baseline", {"max_total_num_tokens": 54498, "max_running_requests": None})
    big = _served("ngram", {"max_total_num_tokens": 1685319, "max_running_requests": 48})
    notes = compare_records([small], [big], n_boot=50).notes
    pool = [n for n in notes if "KV-cache pools" in n]
    assert pool == [
        "the servers reported KV-cache pools of 54,498 (baseline) and 1,685,319 (ngram) tokens "
        "(server.observed.extra.max_total_num_tokens), 30.9x apart: levels that need more than the smaller pool "
        "queue or retract on that side only"
    ]
    assert any("none stated (baseline) and 48 (ngram)" in n and "above 48 concurrent" in n for n in notes)
    # within the ratio (631,668 vs 495,450 = 1.27x) and equal limits: nothing said
    a = _served("baseline", {"max_total_num_tokens": 631668, "max_running_requests": 48})
    b = _served("ngram", {"max_total_num_tokens": 495450, "max_running_requests": 48})
    quiet = compare_records([a], [b], n_boot=50).notes
    assert not [n for n in quiet if "KV-cache" in n or "running requests" in n]
