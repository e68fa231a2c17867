"""The real MkDocs build (subprocess), strict and not, over fixture records."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import sys
import time
from pathlib import Path

import pytest
from hooks_helpers import FIXTURE_RECORDS, ROOT, SHIPPED_RECORDS, run_build

from bench.atomic_write import new_file_mode

FX_BASELINE = "20261201T090000Z-baseline-a1b2c3d"
FX_EAGLE = "20261201T100000Z-eagle3-b2c3d4e"
SHIPPED_EAGLE = "20261130T231000Z-eagle3-339e97f"


def tree(folder: Path) -> dict[str, float]:
    return {str(p.relative_to(folder)): p.stat().st_mtime for p in folder.rglob("*")}


def test_strict_build_has_every_page_and_its_tables(built_site: Path) -> None:
    records = built_site / "records"
    assert (records / "index.html").is_file()
    for rid in (FX_BASELINE, FX_EAGLE, SHIPPED_EAGLE):
        page = records / "eagle-fast-verify" / f"{rid}.html"
        assert page.is_file(), page
        assert (records / "eagle-fast-verify" / f"{rid}.json").is_file()
        assert (records / "eagle-fast-verify" / f"{rid}.csv").is_file()
        html = page.read_text(encoding="utf-8")
        assert "<table>" in html and "<svg" in html
    raw = (records / "eagle-fast-verify" / f"{FX_EAGLE}.json").read_text(encoding="utf-8")
    assert json.loads(raw)["id"] == FX_EAGLE
    index = (records / "index.html").read_text(encoding="utf-8")
    assert 'class="bench-records"' in index and "<th>Experiment</th>" in index
    assert f'href="eagle-fast-verify/{FX_EAGLE}.html"' in index
    eagle = (built_site / "eagle-fast-verify.html").read_text(encoding="utf-8")
    assert ">eagle3 / baseline</th>" in eagle
    # three figure charts, the trade-off, TTFT percentiles, the comparison's ratio chart, and the ratio charts of
    # the two measured EAGLE-3 comparisons (h200-sglang records, by id)
    assert eagle.count('<svg xmlns="http://www.w3.org/2000/svg" class="bench-chart"') == 8
    assert "eagle3 / baseline, by concurrency" in eagle
    assert "NCCL tuned" in eagle and "FlashInfer allreduce fusion" in eagle
    assert "dead-ends/dynamic-spec-disable.html" in eagle
    exp = (built_site / "experiments" / "eagle-fast-verify.html").read_text(encoding="utf-8")
    assert "Switching EAGLE-3 speculation off under load" in exp
    assert 'class="front"' in exp and "Pareto front" in exp  # measured fixtures: the trade-off chart
    assert "admonition abstract" in exp and "Indicative only" in exp  # the computed verdict: no interval there
    assert "eagle3 is faster than baseline" not in exp
    assert "admonition failure" in exp and "Failed levels" in exp  # the fixture baseline's failed C=64
    repeats = (built_site / "experiments" / "fixture-repeats.html").read_text(encoding="utf-8")
    assert repeats.count('class="band ') >= 2  # the group's class, then its palette entry's
    history = (built_site / "history" / "index.html").read_text(encoding="utf-8")
    assert "insufficient data" in history and 'href="baseline-' in history
    methodology = (built_site / "methodology.html").read_text(encoding="utf-8")
    assert "<code>environment.env_vars.NCCL_*</code>" in methodology  # the context table, from bench.compare
    dead = (built_site / "dead-ends" / "dynamic-spec-disable.html").read_text(encoding="utf-8")
    assert "admonition abstract" in dead and f"../records/eagle-fast-verify/{SHIPPED_EAGLE}.html" in dead
    assert "fonts.googleapis" not in eagle and "cdn.jsdelivr" not in eagle


def test_every_file_of_the_built_site_has_the_permissions_of_a_new_file(built_site: Path, tmp_path: Path) -> None:
    """A web server running as another user can read every page and download (the build runs under this process's
    umask; the site cache's kept files, which the site links to, get the same permissions)."""
    expected = new_file_mode(tmp_path)
    files = [p for p in built_site.rglob("*") if p.is_file()]
    modes = {p.relative_to(built_site).as_posix(): p.stat().st_mode & 0o777 for p in files}
    assert len(modes) > 100
    assert {path: mode for path, mode in modes.items() if mode != expected} == {}


def test_hostile_record_is_escaped_in_the_build(built_site: Path) -> None:
    page = built_site / "records" / "fixture-hostile" / "20261201T110000Z-hostile-c3d4e5f.html"
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    body = html.split("<article", 1)[1]
    for bad in ("<script>alert", "<img src=x", '<img src="x"', "<svg onload", "<iframe", 'href="javascript:'):
        assert bad not in body
    head = html.split("<body", 1)[0]
    assert "<script>alert" not in head and "</title><" not in head.split("<title>", 1)[1].split("</title>")[0]


def test_default_build_of_the_shipped_records_writes_nothing_into_the_sources(tmp_path: Path) -> None:
    before = (tree(ROOT / "docs"), tree(SHIPPED_RECORDS))
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run_build(tmp_path / "site", None)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    assert (tree(ROOT / "docs"), tree(SHIPPED_RECORDS)) == before
    page = (tmp_path / "site" / "eagle-fast-verify.html").read_text(encoding="utf-8")
    # the transcribed records' part of the page (the measured small-scale comparisons follow it, and do decide)
    eagle, measured = page.split('<h2 id="the-same-question-measured-here-at-small-scale"', 1)
    assert "baseline is faster at C=4, C=8, C=16 and C=64" in measured
    assert "0.87×" in eagle and "≈0.46×" in eagle
    assert "the point estimates favour baseline by 15% in per-request tok/s" in eagle
    assert "the point estimates favour baseline by 2.2× in total throughput" in eagle
    assert "baseline is faster" not in eagle and "leads by" not in eagle
    # the shipped records are committed in this repository: their pages name the commit that added them
    index = (tmp_path / "site" / "records" / "index.html").read_text(encoding="utf-8")
    assert "Added in commit" in index and "Data last changed" in index
    # the build logs how long its offline check took, as the site benchmark reads it
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from site_build import build_phases, build_phases_cpu, offline_seconds

    seconds = offline_seconds(result.stderr)
    assert seconds is not None and 0 < seconds < 60, result.stderr[-2000:]
    # and where its time went, phase after phase: together no longer than MkDocs says the build took
    phases = build_phases(result.stderr)
    assert phases is not None and list(phases) == ["load", "generator", "record pages", "other pages", "post-build"]
    built = re.search(r"Documentation built in ([0-9.]+) seconds", result.stderr)
    assert built is not None and all(v >= 0 for v in phases.values())
    assert 0 < sum(phases.values()) <= float(built.group(1)) + 0.05
    assert phases["post-build"] >= seconds - 0.01  # the offline check is part of it
    # and the CPU seconds of each phase: together no more than the build's whole process tree used
    cpu = build_phases_cpu(result.stderr)
    assert cpu is not None and list(cpu) == list(phases) and all(v >= 0 for v in cpu.values())
    tree_cpu = (after.ru_utime + after.ru_stime) - (used.ru_utime + used.ru_stime)
    assert 0 < sum(cpu.values()) <= tree_cpu + 0.05


@pytest.fixture
def bad_records(tmp_path: Path) -> Path:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE_RECORDS, records)
    rec = json.loads((records / "eagle-fast-verify" / f"{FX_BASELINE}.json").read_text(encoding="utf-8"))
    rec["levels"][0]["output_throughput"]["value"] = "fast"
    (records / "eagle-fast-verify" / f"{FX_BASELINE}.json").write_text(json.dumps(rec), encoding="utf-8")
    return records


def test_malformed_record_fails_the_strict_build_naming_file_and_field(tmp_path: Path, bad_records: Path) -> None:
    result = run_build(tmp_path / "site", bad_records)
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert f"{FX_BASELINE}.json: field 'levels[0].output_throughput.value': Input should be a valid number" in log
    assert "strict mode" in log


def test_non_strict_build_shows_the_error_box(tmp_path: Path, bad_records: Path) -> None:
    result = run_build(tmp_path / "site", bad_records, strict=False)
    assert result.returncode == 0, result.stderr
    for page in ("index.html", "records/index.html"):
        html = (tmp_path / "site" / page).read_text(encoding="utf-8")
        assert 'class="admonition failure"' in html, page
        assert f"{FX_BASELINE}.json: field &#39;levels[0].output_throughput.value&#39;" in html.replace(
            "'", "&#39;"
        ).replace("&#x27;", "&#39;"), page
    # the good records are still there
    assert (tmp_path / "site" / "records" / "eagle-fast-verify" / f"{FX_EAGLE}.html").is_file()


@pytest.mark.parametrize(
    "kind",
    ["bad json", "unknown schema version", "duplicate id"],
)
def test_other_malformed_records(tmp_path: Path, kind: str) -> None:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE_RECORDS, records)
    path = records / "eagle-fast-verify" / f"{FX_BASELINE}.json"
    if kind == "bad json":
        path.write_text("{ not json", encoding="utf-8")
        expected = f"{FX_BASELINE}.json: field 'line 1 column 3': valid JSON"
    elif kind == "unknown schema version":
        rec = json.loads(path.read_text(encoding="utf-8"))
        rec["schema_version"] = 99
        path.write_text(json.dumps(rec), encoding="utf-8")
        expected = "field 'schema_version': a version this benchbook knows"
    else:
        other = records / "other-experiment"
        other.mkdir()
        rec = json.loads(path.read_text(encoding="utf-8"))
        rec["experiment"] = "other-experiment"
        (other / path.name).write_text(json.dumps(rec), encoding="utf-8")
        expected = f"field 'id': a unique id; '{FX_BASELINE}' is also used by"
    result = run_build(tmp_path / "site", records)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A copy of mkdocs.yml, docs/ and hooks/ to plant bad pages in."""
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", proj / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", proj / "docs")
    shutil.copytree(ROOT / "hooks", proj / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (proj / "records").mkdir()  # mkdocs.yml watches it; the builds below read $BENCHBOOK_RECORDS_DIR
    return proj


def test_bad_shortcode_fails_the_build_naming_the_page(tmp_path: Path, project_copy: Path) -> None:
    page = project_copy / "docs" / "eagle-fast-verify.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n<!-- bench:chart experiment=eagle-fast-verify metric=x -->\n")
    result = run_build(tmp_path / "site", FIXTURE_RECORDS, strict=False, config=project_copy / "mkdocs.yml")
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert "eagle-fast-verify.md, line" in log and "metric='x' is not one of" in log


def test_bad_dead_end_front_matter_fails_strict_naming_file_and_field(tmp_path: Path, project_copy: Path) -> None:
    page = project_copy / "docs" / "dead-ends" / "dynamic-spec-disable.md"
    page.write_text(page.read_text(encoding="utf-8").replace("status: abandoned", "status: gave-up"))
    result = run_build(tmp_path / "site", FIXTURE_RECORDS, config=project_copy / "mkdocs.yml")
    assert result.returncode != 0
    assert "dynamic-spec-disable.md: field 'status': Input should be" in result.stdout + result.stderr


def test_planted_external_script_fails_the_build(tmp_path: Path, project_copy: Path) -> None:
    page = project_copy / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + '\n<script src="https://cdn.example/x.js"></script>\n')
    result = run_build(tmp_path / "site", FIXTURE_RECORDS, strict=False, config=project_copy / "mkdocs.yml")
    assert result.returncode != 0
    assert (
        "index.html: <script src> loads an external resource: https://cdn.example/x.js" in result.stdout + result.stderr
    )


def test_broken_link_in_a_table_fails_strict_and_good_ones_resolve(tmp_path: Path, project_copy: Path) -> None:
    """Tables reach the page as ready HTML (bench.site.prerender); MkDocs still resolves and checks their links."""
    page = project_copy / "docs" / "index.md"
    table = "\n\n| Page | Note |\n| --- | --- |\n| [methods](methodology.md#bootstrap) | ok |\n"
    page.write_text(page.read_text(encoding="utf-8") + table)
    ok = run_build(tmp_path / "site", FIXTURE_RECORDS, config=project_copy / "mkdocs.yml")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert '<td><a href="methodology.html#bootstrap">methods</a></td>' in html
    page.write_text(page.read_text(encoding="utf-8") + "| [gone](no-such-page.md) | broken |\n")
    bad = run_build(tmp_path / "site2", FIXTURE_RECORDS, config=project_copy / "mkdocs.yml")
    assert bad.returncode != 0
    assert "contains a link 'no-such-page.md', but the target is not found" in bad.stdout + bad.stderr


def test_a_phase_counts_its_own_cpu_and_that_of_the_children_it_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's phases (``BUILD_PHASES``) give CPU seconds that include the forked workers' (each phase waits for
    the workers it started), as ``os.times`` counts an ended child once it has been waited for."""
    monkeypatch.syspath_prepend(str(ROOT / "hooks"))
    import site_hooks

    start, own = site_hooks.cpu_seconds(), time.process_time()
    pid = os.fork()
    if pid == 0:  # the child: 0.3 CPU seconds of its own, then out without pytest's exit handlers
        until = time.process_time() + 0.3
        while time.process_time() < until:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    assert site_hooks.cpu_seconds() - start >= 0.3 - 0.02
    assert time.process_time() - own < 0.2  # not this process's own: the child's, counted as it ended

    events = ["pre_build", "pre_build_end", "env", "env_end", "post_build", "post_build_end"]
    marks = {event: (10.0 + i, 100.0 + 2.5 * i) for i, event in enumerate(events)}  # each phase: 1 s, 2.5 CPU s
    monkeypatch.setattr(site_hooks, "_MARKS", marks)
    line = site_hooks._phases_line()
    assert line is not None and line.startswith("load 1.00 s (2.50 CPU s), generator 1.00 s (2.50 CPU s), ")
    assert line.count(" CPU s)") == len(site_hooks._PHASES)
    del marks["post_build_end"]
    assert site_hooks._phases_line() is None  # an event not seen: no line
