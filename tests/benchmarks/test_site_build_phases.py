"""The site benchmark reads where a build's time went from the build's log (benchmarks/site_build.py
``build_phases``): the line the hooks write (hooks/site_hooks.py ``BUILD_PHASES``), the last one when there are
several, none without it or when it is not in the hooks' form; and prints them as a table."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "hooks"))

from site_build import Row, build_phases, build_phases_cpu, phase_table  # noqa: E402


def test_the_logged_phases_are_read_in_order() -> None:
    from site_hooks import BUILD_PHASES

    line = "load 12.31 s, generator 7.40 s, record pages 11.80 s, other pages 3.02 s, post-build 1.33 s"
    log = f"INFO    -  benchbook: {BUILD_PHASES} {line}\nINFO    -  Documentation built in 36.1 seconds\n"
    phases = build_phases(log)
    assert phases == {"load": 12.31, "generator": 7.4, "record pages": 11.8, "other pages": 3.02, "post-build": 1.33}
    assert list(phases) == ["load", "generator", "record pages", "other pages", "post-build"]
    later = f"INFO    -  benchbook: {BUILD_PHASES} load 1 s, generator 2 s\n"
    assert build_phases(log + later) == {"load": 1.0, "generator": 2.0}
    assert build_phases("INFO    -  Documentation built in 0.9 seconds\n") is None  # a plain MkDocs site
    assert build_phases(f"INFO    -  benchbook: {BUILD_PHASES} load twelve s\n") is None
    assert build_phases_cpu(log) is None  # a build from before the CPU seconds were logged


def test_each_phases_cpu_seconds_are_read_beside_its_seconds() -> None:
    from site_hooks import BUILD_PHASES

    line = "load 8.76 s (16.56 CPU s), generator 5.84 s (9.97 CPU s), post-build 0.87 s (1.54 CPU s)"
    log = f"INFO    -  benchbook: {BUILD_PHASES} {line}\n"
    assert build_phases(log) == {"load": 8.76, "generator": 5.84, "post-build": 0.87}
    assert build_phases_cpu(log) == {"load": 16.56, "generator": 9.97, "post-build": 1.54}
    mixed = f"INFO    -  benchbook: {BUILD_PHASES} load 8.76 s (16.56 CPU s), generator 5.84 s\n"
    assert build_phases(mixed) == {"load": 8.76, "generator": 5.84}
    assert build_phases_cpu(mixed) is None  # not every phase has them
    assert build_phases_cpu(f"INFO    -  benchbook: {BUILD_PHASES} load 1 s (two CPU s)\n") is None


def test_the_phase_table_lists_every_phase_of_every_row() -> None:
    def row(records: int, phases: dict[str, float] | None) -> Row:
        return Row("synthetic", records, 1.0, 1.0, 1.0, 1, 1, "x.html", 1.0, 1.0, phases=phases)

    text = phase_table([row(1000, {"load": 12.31, "generator": 7.4}), row(10000, {"load": 130.0, "post-build": 9.0})])
    lines = text.splitlines()
    assert lines[0] == "| records (cold build) | load s (CPU s) | generator s (CPU s) | post-build s (CPU s) |"
    assert lines[2] == "| 1,000 synthetic | 12.3 | 7.4 | — |"
    assert lines[3] == "| 10,000 synthetic | 130.0 | — | 9.0 |"
    assert phase_table([row(10, None)]) == ""


def test_the_phase_table_gives_each_phases_cpu_seconds_in_brackets() -> None:
    with_cpu = Row("synthetic", 1000, 1.0, 1.0, 1.0, 1, 1, "x.html", 1.0, 1.0, phases={"load": 8.76, "generator": 5.84})
    with_cpu.phases_cpu = {"load": 16.56, "generator": 9.97}
    older = Row("synthetic", 100, 1.0, 1.0, 1.0, 1, 1, "x.html", 1.0, 1.0, phases={"load": 1.5})
    lines = phase_table([with_cpu, older]).splitlines()
    assert lines[0] == "| records (cold build) | load s (CPU s) | generator s (CPU s) |"
    assert lines[2] == "| 1,000 synthetic | 8.8 (16.6) | 5.8 (10.0) |"
    assert lines[3] == "| 100 synthetic | 1.5 | — |"
