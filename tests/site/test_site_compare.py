"""The site's comparisons are bench.compare's, in the site's style: same ratios, intervals, warnings and verdict;
a compact table and a ratio chart first, the long form in a fold, downloads beside them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from site_helpers import BASELINE_ID, EAGLE_ID, FX_BASELINE_ID, FX_EAGLE_ID, fixture, fixture_site, shipped, site_of

from bench.compare import Comparison, compare_records
from bench.settings import Settings
from bench.site import comparison_markdown, experiment_comparisons, site_comparison, site_pages
from bench.site._experiment_page import experiment_comparisons_markdown

NS = "{http://www.w3.org/2000/svg}"


def _long_form(md: str) -> str:
    return md.split('??? note "All figures, level by level"', 1)[1]


def _compact(md: str) -> list[str]:
    head = md.split('??? note "All figures, level by level"', 1)[0]
    return [ln for ln in head.splitlines() if ln.startswith("| ")]


def _md(c: Comparison) -> str:
    site = site_of()
    return comparison_markdown(c, "x.md", site)


def test_long_form_shows_bench_compare_ratios_and_intervals() -> None:
    base, cand = fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)
    c = compare_records([base], [cand])
    long_form = _long_form(_md(c))
    assert "| Level | Figure | baseline | eagle3 | eagle3 / baseline | 95% interval | Requests |" in long_form
    for lv in c.levels:
        for m in lv.metrics:
            if m.metric == "accept_length":  # only the candidate (speculative) states it: no ratio, said so
                assert m.ratio.value is None
                assert m.note == "only the candidate states it; the baseline states no accept length"
                continue
            assert m.ratio.value is not None
            assert f"{m.ratio.value:.2f}×".replace(".", "\\.") in long_form
            if m.ratio.lo is not None and m.ratio.hi is not None:
                assert f"{m.ratio.lo:.2f}–{m.ratio.hi:.2f}".replace(".", "\\.") in long_form
    # levels with samples carry an interval, the others say they have none
    assert "| C=1 \\(left out\\) | Per\\-request tok/s ↑ | 146 | 237 | 1\\.62× | 1\\.48–1\\.77 | 4 / 4 |" in long_form
    assert "| C=8 | Per\\-request tok/s ↑ | 96\\.2 | 144 | 1\\.49× | none \\(indicative\\) | 32 / 32 |" in long_form


def test_compact_table_leads_one_row_per_level_with_both_values_and_the_ratio() -> None:
    site = fixture_site()
    _, (c,) = experiment_comparisons(site, "fixture-repeats")
    md = comparison_markdown(c, "x.md", site)
    rows = _compact(md)
    header, body = rows[0], rows[2:]
    assert header.startswith("| Level | Per\\-request tok/s ↑ | ratio \\(95% interval\\) | Total throughput")
    assert [r.split(" | ")[0] for r in body] == [f"| {lv.name}" for lv in c.levels]
    for row, lv in zip(body, c.levels, strict=True):
        m = lv.metric("per_request_tok_s")
        assert m is not None and m.a is not None and m.b is not None and m.ratio.lo is not None
        cells = row.split(" | ")
        shown = [float(v.replace("\\", "").replace(",", "")) for v in cells[1].split(" / ")]
        assert shown == [pytest.approx(m.a, rel=0.01), pytest.approx(m.b, rel=0.01)]
        ratio = f"{m.ratio.value:.2f}× \\({m.ratio.lo:.2f}–{m.ratio.hi:.2f}\\)".replace(".", "\\.")
        assert cells[2] == f"**{ratio}**"  # decided: strong
    # the compact table comes before the fold, the ratio chart and the downloads between them
    assert md.index("| Level | Per") < md.index("<svg") < md.index("Download this comparison") < md.index("??? note")


def test_unresolved_ratios_are_muted() -> None:
    site = site_of(fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID))
    c = site_comparison(site, fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID))
    rows = _compact(comparison_markdown(c, "x.md", site))
    c8 = next(r for r in rows if r.startswith("| C=8 |"))
    assert '<span class="bench-muted">1\\.49×</span>' in c8  # a point estimate, no interval: muted, not strong
    assert "**" not in c8


def test_ratio_chart_draws_each_ratio_inside_its_band_and_the_noise_floor() -> None:
    site = fixture_site()
    _, (c,) = experiment_comparisons(site, "fixture-repeats")
    md = comparison_markdown(c, "x.md", site)
    svg = ET.fromstring(re.search(r"<svg.*?</svg>", md, flags=re.S).group(0))  # type: ignore[union-attr]
    zone = next(g for g in svg.iter(f"{NS}g") if "zone" in (g.get("class") or "").split())
    assert "noise floor ±5%" in "".join(zone.itertext())
    series = {g.get("data-series"): g for g in svg.iter(f"{NS}g") if "series" in (g.get("class") or "").split()}
    assert set(series) == {"Per-request tok/s", "Total throughput", "Output throughput"}
    points = [(float(p.get("data-x")), float(p.get("data-y"))) for p in series["Total throughput"].iter(f"{NS}g")
              if "point" in (p.get("class") or "").split()]  # fmt: skip
    expected = [(float(lv.concurrency or 0), lv.metric("total_throughput").ratio.value) for lv in c.levels]  # type: ignore[union-attr]
    assert [(x, round(y, 4)) for x, y in points] == [(x, round(y or 0, 4)) for x, y in expected]


def test_transcribed_records_give_point_estimates_and_the_verdict() -> None:
    site = site_of(shipped(BASELINE_ID), shipped(EAGLE_ID))
    md = comparison_markdown(site_comparison(site, shipped(BASELINE_ID), shipped(EAGLE_ID)), "x.md", site)
    assert "| C=1 | Per\\-request tok/s ↑ | 92\\.7 | 80\\.9 | 0\\.87× | none \\(indicative\\) | — / — |" in md
    assert "| saturation | Total throughput \\(tok/s\\) ↑ | ≈773 | ≈354 | ≈0\\.46× |" in md
    assert '!!! abstract "Verdict: eagle3 compared with baseline"' in md
    # issue 9: the transcribed pair is indicative (point estimates only), never "baseline is faster"
    assert "Indicative only" in md and "is faster than" not in md and "leads by" not in md
    assert "the point estimates favour baseline by 15% in per-request tok/s" in md
    assert "the point estimates favour baseline by 2.2× in total throughput" in md


def test_left_out_levels_are_marked_and_listed() -> None:
    site = site_of(fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID))
    md = comparison_markdown(site_comparison(site, fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)), "x.md", site)
    assert "| C=2 \\(left out\\) |" in md
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
    assert "48 \\(3 runs\\) / 48 \\(3 runs\\)" in _long_form(comparison_markdown(c, "x.md", site))


def test_every_comparison_a_page_shows_has_its_downloads() -> None:
    site = fixture_site()
    files = dict(site_pages(site))
    _, (c,) = experiment_comparisons(site, "fixture-repeats")
    md = comparison_markdown(c, "experiments/fixture-repeats.md", site)
    links = re.findall(r"\]\(\.\./(comparisons/[^)]+)\)", md)
    assert sorted(links) == sorted(f"comparisons/{c.ids_a[0]}--{c.ids_b[0]}.{ext}" for ext in ("csv", "json"))
    assert all(link in files for link in links)
    # the CSV holds the long form's rows: one per level and figure, the ratios bench.compare computed
    csv_rows = str(files[links[0]] if links[0].endswith(".csv") else files[links[1]]).splitlines()
    assert len(csv_rows) - 1 == sum(len(lv.metrics) for lv in c.levels)
    # shortcodes in hand-written pages name comparisons too: each has its files
    compared = [ln for ln in (site.docs_dir / "eagle-fast-verify.md").read_text().splitlines() if "bench:compare" in ln]  # type: ignore[operator]
    assert compared and any(p.startswith("comparisons/") for p in files)


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
