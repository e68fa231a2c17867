"""The Performance page: read from the benchmark scripts' result files, the machine, date and commit with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.benchmark_results import CLIENT_SCALING, CLIENTS, COLD_FLOOR, RESULT_FILES, SITE_BUILD, result_head
from bench.site import load_results, performance_markdown
from bench.site._escape import md_text

MACHINE = {"cpu": "Test CPU <b>", "cores": 2, "memory_gib": 23.0, "load_average_start": [1.5, 1.0, 1.0]}


def _site(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "benchbook-site-build", "version": 1, "date": "2026-12-01T15:00:00Z", "commit": "abc123def456",
            "dirty": False, "machine": MACHINE, "rows": rows}  # fmt: skip


ROW_1000 = {"kind": "synthetic", "records": 1000, "build_s": 12.5, "warm_build_s": 4.25, "peak_rss_mib": 400.0,
            "warm_peak_rss_mib": 350.0, "site_mib": 90.0, "pages": 1300, "largest_page": "records/index.html",
            "largest_page_kib": 900.0,
            "search_index_kib": 80.0, "serve_s": 6.25, "plain_build_s": 5.0, "ratio": 2.5,
            "offline_s": 0.5, "offline_share": 0.04}  # fmt: skip


def _write(folder: Path, name: str, value: Any) -> None:
    (folder / name).write_text(json.dumps(value), encoding="utf-8")


def test_site_tables_and_goals_come_from_the_files(tmp_path: Path) -> None:
    _write(tmp_path, "site-build.json", _site([ROW_1000]))
    before = {k: v for k, v in ROW_1000.items() if not k.startswith(("warm_", "offline_"))} | {
        "build_s": 500.0,
        "ratio": 40.0,
    }
    _write(tmp_path, "site-build-before.json", _site([before]) | {"commit": "0123456789ab", "dirty": True})
    page = performance_markdown(load_results(tmp_path))
    now, _, old = page.partition("### Before the site was optimized")
    row = "| 1,000 synthetic | 12.5 | 4.2 | 400 | 350 | 90.0 | 1,300 | 900 (records/index\\.html) | 80 | 6.2 "
    row += "| 0.5 (4.0%) | 5.0 | 2.5× | — | — |"  # no CPU figures in the file
    assert row in now
    assert "| 500.0 | — | 400 | — |" in old and "40.0×" in old  # a file without warm builds
    assert "| 6.2 | — | 5.0 | 40.0× | — | — |" in old  # nor the offline check's time
    assert "`abc123def456`" in now and "`0123456789ab` (uncommitted changes)" in old
    assert "2026\\-12\\-01T15:00:00Z" in now and "Test CPU &lt;b&gt;" in now and "2 core(s)" in now
    assert "- 1,000 records, build ≤ 15 s: met (12.5)" in now
    assert "- 1,000 records, warm build (the cache a build filled) ≤ 15 s: met (4.2)" in now
    assert "- 1,000 records, serve ≤ 5 s, the slowest new record: **not met** (6.2)" in now
    assert "- 1,000 records, no page over 1 MiB: met (900.0)" in now
    assert "- 1,000 records, offline check ≤ 5% of the build: met (4.0%)" in now
    assert "offline check ≤" not in old
    row_10k = ROW_1000 | {"records": 10000, "build_s": 95.0, "peak_rss_mib": 2100.0, "warm_peak_rss_mib": 1900.0,
                          "offline_s": 9.5, "offline_share": 0.1}  # fmt: skip
    _write(tmp_path, "site-build.json", _site([row_10k]))
    now = performance_markdown(load_results(tmp_path)).partition("### Before the site was optimized")[0]
    assert "- 10,000 records, build ≤ 90 s: **not met** (95.0)" in now
    assert "- 10,000 records, peak RSS ≤ 2 GiB: **not met** (2,100.0)" in now
    assert "- 10,000 records, warm build's peak RSS ≤ 2 GiB: met (1,900.0)" in now
    assert "- 10,000 records, offline check ≤ 5% of the build: **not met** (10.0%)" in now


def test_the_cpu_columns_come_from_the_file(tmp_path: Path) -> None:
    _write(tmp_path, "site-build.json", _site([ROW_1000 | {"cpu_s": 48.25, "cpu_ratio": 9.65}]))
    now = performance_markdown(load_results(tmp_path)).partition("### Before the site was optimized")[0]
    assert "| 5.0 | 2.5× | 48.2 | 9.7× |" in now


def test_serve_is_the_median_of_its_samples_and_its_goal_the_slowest(tmp_path: Path) -> None:
    row = ROW_1000 | {"serve_s": 4.1, "serve_samples_s": [3.9, 4.1, 5.3]}
    _write(tmp_path, "site-build.json", _site([row]))
    now = performance_markdown(load_results(tmp_path)).partition("### Before the site was optimized")[0]
    assert "| 80 | 4.1 (3.9 / 4.1 / 5.3) | 0.5 (4.0%) |" in now
    assert "- 1,000 records, serve ≤ 5 s, the slowest new record: **not met** (5.3)" in now  # not the median's 4.1
    row["serve_samples_s"] = [3.9, 4.1, 4.9]
    _write(tmp_path, "site-build.json", _site([row]))
    now = performance_markdown(load_results(tmp_path)).partition("### Before the site was optimized")[0]
    assert "- 1,000 records, serve ≤ 5 s, the slowest new record: met (4.9)" in now


def test_client_tables_come_from_their_files(tmp_path: Path) -> None:
    clients = {"kind": "benchbook-clients-side-by-side", "version": 1, "date": "2026-12-01T14:30:00Z",
               "commit": "a25bb31c0ffe", "dirty": False, "machine": MACHINE,
               "settings": {"output_tokens": 256, "rounds": 3}, "skipped": {"guidellm": "no venv"},
               "summary": [{"concurrency": 64, "client": "benchbook", "server_tok_s": 21637.0, "tool_tok_s": 20144.0,
                            "cpu_s_per_1k_tokens": 0.0217, "vs_benchbook": 1.0, "failed": 0, "lag_ms_p50": 0.31,
                            "lag_ms_p99": 0.9},
                           {"concurrency": 64, "client": "aiperf", "server_tok_s": 16000.0, "tool_tok_s": None,
                            "cpu_s_per_1k_tokens": 0.05, "vs_benchbook": 0.74, "failed": 0}]}  # fmt: skip
    scaling = {"kind": "benchbook-client-scaling", "version": 1, "date": "2026-12-01T16:00:00Z", "commit": None,
               "dirty": None, "machine": MACHINE,
               "rows": [{"client_processes": 1, "server_tok_s": 45000.0, "vs_one_process": 1.0,
                         "cpu_s_per_1k_tokens": 0.02, "failed": 0, "lag_ms": {"p50": 2.0, "p99": 9.0, "n": 10}},
                        {"client_processes": 8, "server_tok_s": 200000.0, "vs_one_process": 4.44,
                         "cpu_s_per_1k_tokens": 0.03, "failed": 0, "lag_ms": None}],
               "half_ceiling": {"client_processes": 8, "server_tok_s": 100000.0, "cpu_s_per_1k_tokens": 0.03,
                                "failed": 0, "lag_ms": {"p50": 0.2, "p99": 0.8, "n": 5}}}  # fmt: skip
    _write(tmp_path, "clients.json", clients)
    _write(tmp_path, "client-scaling.json", scaling)
    page = performance_markdown(load_results(tmp_path))
    assert "| 64 | benchbook | 21,637 | 20,144 | 0.0217 | 1.00× | 0 | 0.31 / 0.90 ms |" in page
    assert "| 64 | aiperf | 16,000 | — | 0.0500 | 0.74× | 0 | — |" in page
    assert "- guidellm not run: no venv" in page
    assert "| 8 | 200,000 | 4.44× | 0.0300 | 0 | — |" in page
    assert "| 8 (paced at half the ceiling) | 100,000 | — | 0.0300 | 0 | 0.20 / 0.80 ms |" in page
    assert "benchbook commit `unknown`" in page
    assert "*Not measured yet: `benchmarks/results/client-scaling-h200.json` is missing.*" in page


def test_the_h200_scaling_file_has_its_own_table_with_the_paced_run_and_the_goals(tmp_path: Path) -> None:
    h200 = {"kind": "benchbook-client-scaling", "version": 1, "date": "2026-12-01T17:40:00Z", "commit": "f1b5de3c9539",
            "dirty": False, "machine": {**MACHINE, "cores": 16},
            "rows": [{"client_processes": 1, "server_tok_s": 127194.0, "vs_one_process": 1.0, "failed": 0,
                      "cpu_s_per_1k_tokens": 0.0079, "lag_ms": None, "event_loop": "uvloop"}],
            "half_ceiling": {"client_processes": 11, "server_tok_s": 440087.3, "cpu_s_per_1k_tokens": 0.018,
                             "failed": 0, "lag_ms": {"p50": 0.05, "p99": 0.63, "n": 9}, "itl_ms": 0.9583,
                             "offered_tok_s": 534294, "split": "server 4 process(es), client 11",
                             "event_loop": "uvloop"},
            "goals": {"scaling": {"target": ">= 4x", "value": 8.401, "met": True},
                      "lag_p99_half_ceiling_ms": {"target": "< 1 ms", "value": 0.63, "met": True}}}  # fmt: skip
    _write(tmp_path, "client-scaling-h200.json", h200)
    page = performance_markdown(load_results(tmp_path))
    section = page.split("## The sharded client on the H200 host", 1)[1]
    assert "benchbook commit `f1b5de3c9539`" in section
    assert "| 11 (paced at half the ceiling) | 440,087 | — | 0.0180 | 0 | 0.05 / 0.63 ms |" in section
    assert r"534,294 tok/s offered, 440,087 served; server 4 process\(es\), client 11." in section
    assert "Client event loop: uvloop." in section
    assert r"- lag\_p99\_half\_ceiling\_ms (&lt; 1 ms): met (0.63)" in section
    assert "*Not measured yet: `benchmarks/results/client-scaling.json` is missing.*" in page  # the other one


def test_missing_and_broken_files_are_said_so(tmp_path: Path) -> None:
    (tmp_path / "clients.json").write_text("{not json", encoding="utf-8")
    page = performance_markdown(load_results(tmp_path))
    assert "*Not measured yet: `benchmarks/results/site-build.json` is missing.*" in page
    assert "clients\\.json: not readable JSON" in page
    assert "*Not measured yet: `benchmarks/results/client-scaling.json` is missing.*" in page


def test_the_cold_builds_phases_are_a_table_of_their_own(tmp_path: Path) -> None:
    phases = {"load": 12.31, "generator": 7.4, "record pages": 11.8, "other pages": 3.0, "post-build": 1.25}
    _write(tmp_path, "site-build.json", _site([ROW_1000 | {"phases": phases}, ROW_1000 | {"records": 27}]))
    now = performance_markdown(load_results(tmp_path)).partition("### Before the site was optimized")[0]
    head = "| Records (cold build) | Load (s) | Generator (s) | Record pages (s) | Other pages (s) | Post\\-build (s) |"
    assert head in now
    assert "| 1,000 synthetic | 12.3 | 7.4 | 11.8 | 3.0 | 1.2 |" in now
    assert "| 27 synthetic |" not in now.split(head)[1]  # a row without phases is not listed
    _write(tmp_path, "site-build.json", _site([ROW_1000]))  # a file written before the phases were logged
    assert "Records (cold build)" not in performance_markdown(load_results(tmp_path))
    cpu = {"load": 23.1, "generator": 9.97, "record pages": 13.77, "other pages": 0.3}  # no post-build: its cell bare
    _write(tmp_path, "site-build.json", _site([ROW_1000 | {"phases": phases, "phases_cpu": cpu}]))
    now = performance_markdown(load_results(tmp_path))
    assert "| 1,000 synthetic | 12.3 (23.1) | 7.4 (10.0) | 11.8 (13.8) | 3.0 (0.3) | 1.2 |" in now
    assert "each phase's CPU seconds" in now


def test_the_cold_build_floor_comes_from_its_file(tmp_path: Path) -> None:
    page = performance_markdown(load_results(tmp_path))
    assert "*Not measured yet: `benchmarks/results/cold-floor.json` is missing.*" in page
    floor = {"kind": "benchbook-cold-floor", "version": 1, "date": "2026-12-03T13:40:00Z", "commit": "fedcba987654",
             "dirty": False, "machine": MACHINE, "goals": {"1000": 15.0, "10000": 90.0},
             "rows": [{"records": 1000, "cores": 2, "pages": 1142, "total": 38.0, "validate": 3.0, "redact": 2.5,
                       "level intervals": 8.75, "comparison intervals": 3.5, "mandated": 17.75, "floor": 8.875,
                       "plain": 5.5},
                      {"records": 300, "cores": 2, "pages": 400, "total": 11.0, "validate": 0.9, "redact": 0.8,
                       "level intervals": 2.6, "comparison intervals": 1.1, "mandated": 5.4,
                       "floor": 2.7}]}  # fmt: skip
    _write(tmp_path, "cold-floor.json", floor)
    page = performance_markdown(load_results(tmp_path))
    section = page.partition("### The least a cold build can take")[2]
    assert "benchbook commit `fedcba987654`" in section
    # the floor with the plain pages: 8.875 + 5.5 / 2 = 11.625; no plain build, no sum; a size without a goal
    assert "| 1,000 | 2 | 3.0 | 2.5 | 8.8 | 3.5 | 17.8 | 8.9 | 5.5 | 11.6 | 15 |" in section
    assert "| 300 | 2 | 0.9 | 0.8 | 2.6 | 1.1 | 5.4 | 2.7 | — | — | — |" in section
    _write(tmp_path, "cold-floor.json", floor | {"rows": []})
    assert "*The file holds no rows.*" in performance_markdown(load_results(tmp_path))
    _write(tmp_path, "cold-floor.json", floor | {"rows": "nonsense"})
    page = performance_markdown(load_results(tmp_path))
    assert md_text("cold-floor.json: field 'rows': a JSON list (got text)") in page
    (tmp_path / "cold-floor.json").write_text("{", encoding="utf-8")
    section = performance_markdown(load_results(tmp_path)).partition("### The least a cold build can take")[2]
    assert "not readable JSON" in section.partition("##")[0]


def test_a_file_not_in_its_scripts_shape_is_named_with_its_field(tmp_path: Path) -> None:
    """A result file edited by hand or broken in a pull request is said so in its place, with the field and what
    was expected; the other files' sections are still made (before, a list where an object belongs crashed the
    build with an AttributeError)."""
    _write(tmp_path, "site-build.json", _site([ROW_1000, {**ROW_1000, "phases": [1, 2]}]))
    (tmp_path / "clients.json").write_text("[1, 2]", encoding="utf-8")
    _write(tmp_path, "client-scaling.json", result_head(CLIENT_SCALING) | {"rows": [], "goals": {"lag": 0.5}})
    (tmp_path / "cold-floor.json").write_text("[" * 200 + "]" * 200, encoding="utf-8")
    results = load_results(tmp_path)
    assert results["site-build.json"] == {
        "error": "site-build.json: field 'rows[1].phases': a JSON object (got a list)"
    }
    assert results["clients.json"] == {"error": "clients.json: the whole file: a JSON object (got a list)"}
    assert results["client-scaling.json"] == {
        "error": "client-scaling.json: field 'goals.lag': a JSON object (got a number)"
    }
    assert results["cold-floor.json"] == {
        "error": "cold-floor.json: JSON nested at most 100 deep (this file nests deeper)"
    }
    page = performance_markdown(results)
    assert f"*{md_text(results['site-build.json']['error'])}*" in page
    assert f"*{md_text(results['clients.json']['error'])}*" in page


def test_a_file_of_another_kind_or_format_version_is_named(tmp_path: Path) -> None:
    """Each file's kind and format version are checked before anything is read from it: a file that another script
    wrote, or a newer format whose fields may have been renamed, is named with the field and what was expected,
    not shown as a table of missing figures."""
    good = _site([ROW_1000])
    cases = {
        "site-build.json": good | result_head(CLIENTS),
        "site-build-before.json": good | {"version": 2},
        "cold-floor.json": {"rows": [], "machine": MACHINE},
        "clients.json": result_head(CLIENTS) | {"version": "1"},
        "client-scaling.json": result_head(SITE_BUILD) | {"kind": None},
    }
    for name, value in cases.items():
        _write(tmp_path, name, value)
    results = load_results(tmp_path)
    assert results == {
        "site-build.json": {
            "error": "site-build.json: field 'kind': \"benchbook-site-build\", what benchmarks/site_build.py writes "
            '(got "benchbook-clients-side-by-side")'
        },
        "site-build-before.json": {
            "error": "site-build-before.json: field 'version': 1, the format version this benchbook reads (got 2) "
            "(a newer format: update benchbook)"
        },
        "cold-floor.json": {
            "error": "cold-floor.json: field 'kind': \"benchbook-cold-floor\", what benchmarks/cold_floor.py writes "
            "(got missing)"
        },
        "clients.json": {
            "error": "clients.json: field 'version': 1, the format version this benchbook reads (got text)"
        },
        "client-scaling.json": {
            "error": "client-scaling.json: field 'kind': \"benchbook-client-scaling\", what "
            "benchmarks/client_scaling.py writes (got null)"
        },
    }
    page = performance_markdown(results)
    for name in cases:
        assert f"*{md_text(results[name]['error'])}*" in page
    _write(tmp_path, "site-build.json", good)
    assert load_results(tmp_path)["site-build.json"] == good


def test_the_shipped_result_files_are_each_of_its_format() -> None:
    """The files committed under benchmarks/results/ (what the site shows) all pass their format's check."""
    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
    results = load_results(folder)
    assert set(results) == set(RESULT_FILES)
    assert [r["error"] for r in results.values() if "error" in r] == []
    assert results["cold-floor.json"]["kind"] == COLD_FLOOR.kind


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
    max_leaves=12,
)
_CONTAINERS_READ = [
    "machine",
    "settings",
    "goals",
    "skipped",
    "half_ceiling",
    "rows",
    "summary",
    "phases",
    "phases_cpu",
    "lag_ms",
]
_VALUES_READ = ["records", "kind", "serve_samples_s", "offline_share", "met", "floor", "cores", "target", "value"]
_KEYS = st.sampled_from([*_CONTAINERS_READ, *_VALUES_READ, "event_loop", "split"])
_SHAPED = st.recursive(
    _JSON,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_KEYS, kids, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(list(RESULT_FILES)), st.tuples(_SHAPED, st.booleans()), max_size=6))
def test_any_json_in_the_result_files_gives_a_page(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, tuple[Any, bool]]
) -> None:
    """Whatever JSON the files hold, the page is made: each file is shown or named as not in its format. Most
    objects are given their format's kind and version, so that what follows them reaches the renderers."""
    folder = tmp_path_factory.mktemp("results")
    for name, (value, headed) in files.items():
        _write(folder, name, value | result_head(RESULT_FILES[name]) if headed and isinstance(value, dict) else value)
    results = load_results(folder)
    assert set(results) == set(files)
    page = performance_markdown(results)
    assert page.startswith("# Performance")


def test_a_goal_stated_as_null_is_not_measured(tmp_path: Path) -> None:
    """A goal whose entry is null (found by the property test below: it ended the build with an AttributeError)."""
    scaling = result_head(CLIENT_SCALING) | {"machine": MACHINE, "rows": [], "goals": {"scaling": None}}
    _write(tmp_path, "client-scaling.json", scaling)
    section = performance_markdown(load_results(tmp_path)).partition("## The sharded client")[2]
    assert "- scaling (): not measured (—)" in section
