from __future__ import annotations

import pytest
from site_helpers import BASELINE_ID, shipped_site

from bench.site import SHORTCODES, ShortcodeError, expand_shortcodes

PAGE = "notes/page.md"


def expand(md: str) -> str:
    return expand_shortcodes(md, shipped_site(), PAGE)


def test_compare_shortcode_renders_the_table() -> None:
    out = expand("Intro\n\n<!-- bench:compare experiment=eagle-fast-verify baseline=baseline candidate=eagle3 -->\n")
    assert "| Level | Figure | baseline | eagle3 | eagle3 / baseline | 95% interval | Requests |" in out
    assert "0\\.87×" in out and "none \\(indicative\\)" in out
    assert '!!! abstract "Verdict: eagle3 compared with baseline"' in out
    only = expand("<!-- bench:compare experiment=eagle-fast-verify candidate=eagle3 metrics=total_throughput -->")
    assert "≈0\\.46×" in only and "0\\.87×" not in only  # the baseline defaults to the variant named baseline


def test_verdict_shortcode_on_the_shipped_records() -> None:
    out = expand("<!-- bench:verdict experiment=eagle-fast-verify candidate=eagle3 -->")
    assert "15%" in out and "2.2×" in out
    assert out.count("!!! ") == 1 and "| Level |" not in out  # the sentence only (comparable pair: no warning)


def test_diff_context_table_settings_tradeoff_history_shortcodes() -> None:
    out = expand("<!-- bench:diff experiment=eagle-fast-verify candidate=eagle3 -->")
    assert "| `speculative.algorithm` | **context** | *not stated* | EAGLE3 |" in out
    out = expand("<!-- bench:context-table -->")
    assert "| `model.name` | context |" in out and "| `environment.info.*` | info |" in out
    out = expand("<!-- bench:settings -->")
    assert "| `regression.ratio_threshold` | 5% |" in out
    out = expand("<!-- bench:tradeoff experiment=eagle-fast-verify -->")
    assert "no trade-off chart" in out
    out = expand("<!-- bench:history experiment=eagle-fast-verify -->")
    assert "](../history/baseline-" in out and "insufficient data" in out


def test_baseline_may_be_a_record_id() -> None:
    out = expand(f"<!-- bench:compare experiment=eagle-fast-verify baseline={BASELINE_ID} candidate=eagle3 -->")
    assert "0.87×" in out


def test_links_are_relative_to_the_page() -> None:
    out = expand("<!-- bench:records experiment=eagle-fast-verify -->")
    assert f"](../records/eagle-fast-verify/{BASELINE_ID}.md)" in out
    assert "](../experiments/eagle-fast-verify.md)" in out


def test_chart_and_environment_and_dead_ends() -> None:
    out = expand(
        "<!-- bench:chart experiment=eagle-fast-verify metric=total_throughput -->\n"
        "<!-- bench:environment experiment=eagle-fast-verify -->\n"
        '<!-- bench:dead-ends experiment="eagle-fast-verify" -->\n'
    )
    assert "<svg" in out and "at saturation, concurrency not stated" in out
    assert "| NCCL tuned | yes | yes |" in out
    assert "| CUDA runtime | 13 | 13 |" in out
    assert "| FlashInfer allreduce fusion | yes | yes |" in out
    assert "](../dead-ends/dynamic-spec-disable.md)" in out


def test_indented_shortcode_stays_inside_its_block() -> None:
    out = expand('!!! note "x"\n\n    <!-- bench:latest n=1 -->\n')
    table_lines = [ln for ln in out.splitlines() if "|" in ln]
    assert table_lines and all(ln.startswith("    | ") for ln in table_lines)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("<!-- bench:nope -->", "unknown shortcode 'nope'"),
        ("<!-- bench:chart experiment=eagle-fast-verify -->", "missing argument(s) metric"),
        ("<!-- bench:chart experiment=eagle-fast-verify metric=speed -->", "metric='speed' is not one of"),
        ("<!-- bench:latest n=many -->", "is not a whole number"),
        (
            "<!-- bench:compare experiment=eagle-fast-verify candidate=eagle3 metrics=ttft_p50 -->",
            "each must be one of",
        ),
        ("<!-- bench:percentiles experiment=eagle-fast-verify metric=itl_ms -->", "metric='itl_ms' is not one of"),
        ("<!-- bench:verdict experiment=eagle-fast-verify -->", "missing argument(s) candidate"),
        ("<!-- bench:latest size=3 -->", "unknown argument(s) size"),
        ("<!-- bench:records experiment=Bad/Name -->", "is not an experiment/variant name"),
        ("<!-- bench:records experiment -->", "is not key=value"),
        ('<!-- bench:records experiment="open -->', "cannot split"),
        ("Text <!-- bench:latest --> inline", "must stand alone on its line"),
    ],
)
def test_bad_shortcodes_fail_naming_the_page(line: str, problem: str) -> None:
    with pytest.raises(ShortcodeError) as info:
        expand(f"# Title\n\n{line}\n")
    msg = str(info.value)
    assert msg.startswith(f"{PAGE}, line 3: shortcode ")
    assert problem in msg


def test_code_is_left_alone() -> None:
    md = "```text\n<!-- bench:nope -->\n```\n\nUse `<!-- bench:nope -->` like this.\n"
    assert expand(md) == md


def test_unknown_experiment_is_a_visible_warning_not_a_crash() -> None:
    out = expand("<!-- bench:compare experiment=no-such baseline=a candidate=b -->")
    assert '!!! warning "Nothing to show"' in out


def test_every_shortcode_is_documented_in_the_module() -> None:
    import bench.site._shortcodes as mod

    for name in SHORTCODES:
        assert f"``{name}" in (mod.__doc__ or "")
