"""The site's comparisons are bench.compare's, laid out: same ratios, intervals, warnings and verdict."""

from __future__ import annotations

from site_helpers import BASELINE_ID, EAGLE_ID, FX_BASELINE_ID, FX_EAGLE_ID, fixture, fixture_site, shipped, site_of

from bench.compare import compare_records
from bench.settings import Settings
from bench.site.compare import comparison_markdown, comparison_table, experiment_comparisons, site_comparison
from bench.site.experiment_page import experiment_comparisons_markdown


def test_table_shows_bench_compare_ratios_and_intervals() -> None:
    base, cand = fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)
    c = compare_records([base], [cand])
    table = comparison_table(c)
    assert table.splitlines()[0] == (
        "| Level | Figure | Better | baseline | eagle3 | eagle3 / baseline | 95% interval | Requests |"
    )
    for lv in c.levels:
        for m in lv.metrics:
            if m.metric == "accept_length":  # only the candidate (speculative) states it: no ratio, said so
                assert m.ratio.value is None
                assert m.note == "only the candidate states it; the baseline states no accept length"
                continue
            assert m.ratio.value is not None
            assert f"{m.ratio.value:.2f}×" in table
            if m.ratio.lo is not None and m.ratio.hi is not None:
                assert f"{m.ratio.lo:.2f}–{m.ratio.hi:.2f}" in table
    # levels with samples carry an interval, the others say they have none
    assert "| C=1 (left out) | per\\-request tok/s | higher | 146 | 237 | 1.62× | 1.47–1.77 | 4 / 4 |" in table
    assert (
        "| C=8 | per\\-request tok/s | higher | 96.2 | 144 | 1.49× | point estimate, no interval (indicative) "
        "| 32 / 32 |" in table
    )


def test_transcribed_records_give_point_estimates_and_the_verdict() -> None:
    site = site_of(shipped(BASELINE_ID), shipped(EAGLE_ID))
    md = comparison_markdown(site_comparison(site, shipped(BASELINE_ID), shipped(EAGLE_ID)), "x.md", site)
    row = "| C=1 | per\\-request tok/s | higher | 92.7 | 80.9 | 0.87× | point estimate, no interval (indicative) "
    row += "| — / — |"
    assert row in md
    assert "| saturation | total throughput \\(tok/s\\) | higher | ≈773 | ≈354 | ≈0.46× |" in md
    assert '!!! abstract "Verdict: eagle3 compared with baseline"' in md
    # issue 9: the transcribed pair is indicative (point estimates only), never "baseline is faster"
    assert "Indicative only" in md and "is faster than" not in md and "leads by" not in md
    assert "the point estimates favour baseline by 15% in per-request tok/s" in md
    assert "the point estimates favour baseline by 2.2× in total throughput" in md


def test_left_out_levels_are_marked_and_listed() -> None:
    site = site_of(fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID))
    md = comparison_markdown(site_comparison(site, fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)), "x.md", site)
    assert "| C=2 (left out) |" in md
    assert "- C=1: baseline: fewer than 10 requests \\(4 in 1 run\\); candidate: fewer than 10 requests" in md
    assert "Left out: C=1 (baseline: fewer than 10 requests" in md  # the verdict names them too


def test_incomparable_pair_gets_a_warning_naming_each_field_with_both_values() -> None:
    base = fixture(FX_BASELINE_ID)
    cand = fixture(FX_EAGLE_ID)
    gpu = cand.environment.gpu.model_copy(update={"count": 8})
    cand = cand.model_copy(update={"environment": cand.environment.model_copy(update={"gpu": gpu})})
    site = site_of(base, cand)
    md = comparison_markdown(site_comparison(site, base, cand), "x.md", site)
    # the differing fields come first, then the (withheld) verdict, then the table
    assert md.startswith('!!! failure "Not comparable: the context differs"')
    assert (
        md.index("- `environment.gpu.count`: baseline `1`, eagle3 `8`") < md.index("!!! abstract") < md.index("| Level")
    )
    assert "No verdict: baseline and eagle3 are not comparable" in md and "is faster than" not in md
    # the treatment itself (speculative settings) is not warned about
    assert "`speculative.algorithm`:" not in md


def test_forced_cross_context_is_labelled_on_the_site() -> None:
    base = fixture(FX_BASELINE_ID)
    cand = fixture(FX_EAGLE_ID)
    gpu = cand.environment.gpu.model_copy(update={"count": 8})
    cand = cand.model_copy(update={"environment": cand.environment.model_copy(update={"gpu": gpu})})
    forced = Settings.model_validate(
        {"experiments": {base.experiment: {"title": "t", "baseline": "baseline", "cross_context": True}}}
    )
    site = site_of(base, cand, settings=forced)
    md = comparison_markdown(site_comparison(site, base, cand), "x.md", site)
    assert md.startswith('!!! warning "Cross-context comparison (forced)"')
    assert '!!! abstract "Verdict (cross-context): eagle3 compared with baseline"' in md
    assert "    Cross-context comparison (forced): baseline and eagle3 differ in context" in md


def test_repeated_runs_are_pooled_per_side() -> None:
    site = fixture_site()
    base, comparisons = experiment_comparisons(site, "fixture-repeats")
    assert base is not None and base.variant == "baseline"
    (c,) = comparisons
    assert len(c.ids_a) == 3 and len(c.ids_b) == 3
    assert "48 (3 runs) / 48 (3 runs)" in comparison_table(c)


def test_baseline_variant_comes_from_settings_else_the_variant_named_baseline() -> None:
    records = [lr.record for lr in fixture_site().records if lr.record.experiment == "fixture-repeats"]
    declared = Settings.model_validate(
        {
            "experiments": {
                "fixture-repeats": {"title": "t", "baseline": "ngram"},
                "unknown-exp": {"title": "u", "baseline": "x"},
            }
        }
    )
    site = site_of(*records, settings=declared)
    base, (c,) = experiment_comparisons(site, "fixture-repeats")
    assert base is not None and base.variant == "ngram" and c.label_a == "ngram" and c.label_b == "baseline"
    assert "declared in `benchbook.yaml`" in experiment_comparisons_markdown(site, "fixture-repeats", "p.md")
    # a declared baseline without records falls back to the variant named baseline
    odd = Settings.model_validate({"experiments": {"fixture-repeats": {"title": "t", "baseline": "gone"}}})
    assert experiment_comparisons(site_of(*records, settings=odd), "fixture-repeats")[0].variant == "baseline"  # type: ignore[union-attr]
    # no baseline at all: one line, no comparison
    only_ngram = [r for r in records if r.variant == "ngram"]
    assert "No baseline variant" in experiment_comparisons_markdown(site_of(*only_ngram), "fixture-repeats", "p.md")
