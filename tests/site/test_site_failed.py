"""Failed levels (Level.failure) never enter a chart line, a Pareto front, a band or a history series, and the
record and experiment pages name them with their reason.

The fixture baseline's C=64 level was flagged by schema v1 (error rate 3% above its threshold); the v1 -> v2
migration made it a failed level. It has the highest total throughput of the record (5,586 tok/s), so drawn it
would sit on the Pareto front.
"""

from __future__ import annotations

from site_helpers import FX_BASELINE_ID, fixture, fixture_site, site_of

from bench.compare import level_interval
from bench.figures import figure as metric_spec
from bench.site import (
    concurrency_chart,
    experiment_markdown,
    history_markdown,
    percentile_chart,
    record_markdown,
    tradeoff_chart,
)

REASON = "error rate 3% above the run's threshold \\(flagged by schema v1\\)"


def _base():  # type: ignore[no-untyped-def]
    record = fixture(FX_BASELINE_ID)
    (c64,) = [lv for lv in record.levels if lv.concurrency == 64]
    assert c64.failed and c64.total_throughput is not None and c64.total_throughput.headline() > 5000
    return record


def test_failed_level_is_not_drawn_on_a_line_and_the_chart_says_so() -> None:
    record = _base()
    chart = concurrency_chart(
        [("baseline", record, metric_spec("total_throughput"))], title="t", y_title="y", chart_id="c"
    )
    xs = [p.x for s in chart.series for p in s.points]
    assert xs == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    assert max(p.y for s in chart.series for p in s.points) < 5000
    assert chart.note.endswith("failed levels, not drawn: C=64")
    pct = percentile_chart([("baseline", record)], "ttft_ms", title="t", y_title="y")
    assert 64.0 not in {p.x for s in pct.series for p in s.points}
    assert "failed levels, not drawn: C=64" in pct.note


def test_failed_level_is_never_on_the_pareto_front() -> None:
    chart = tradeoff_chart([("baseline", _base())], title="t")
    labels = [p.label for s in chart.series for p in s.points]
    assert "C=64" not in labels and len(labels) == 6
    assert max(y for _, y in chart.front) < 5000
    assert "failed levels, not drawn: C=64" in chart.note


def test_failed_run_is_not_in_a_band() -> None:
    record = _base()
    (c64,) = [lv for lv in record.levels if lv.concurrency == 64]
    (c32,) = [lv for lv in record.levels if lv.concurrency == 32]
    assert level_interval("total_throughput", [c64]) is None
    assert level_interval("total_throughput", [c64, c64]) is None
    iv = level_interval("total_throughput", [c32, c64, c32])
    assert iv is not None and iv.n_runs == 2 and iv.point < 5000


def test_record_page_names_the_failed_level_and_why() -> None:
    md = record_markdown(_base())
    assert '!!! failure "1 failed level(s)"' in md
    assert f"    - C=64: {REASON}" in md
    row = next(line for line in md.splitlines() if line.startswith("| C=64 |"))
    assert f"**failed**: {REASON}" in row
    assert "failed levels, not drawn: C=64" in md


def test_experiment_page_and_history_show_failed_levels() -> None:
    site = fixture_site()
    md = experiment_markdown(site, "eagle-fast-verify")
    assert '!!! failure "Failed levels"' in md
    assert f"| baseline | C=64 | {REASON} |" in md
    assert "failed levels, not drawn: baseline C=64" in md
    key = site.configuration_of[FX_BASELINE_ID]
    history = history_markdown(site, key)
    assert "| *failed* |" in history


def test_a_record_without_failed_levels_has_no_box() -> None:
    base = _base()
    fine = base.model_copy(update={"levels": [lv for lv in base.levels if not lv.failed]})
    assert "failed level" not in record_markdown(fine)
    assert "Failed levels" not in experiment_markdown(site_of(fine), fine.experiment)
