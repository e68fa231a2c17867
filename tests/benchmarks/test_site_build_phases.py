"""The site benchmark reads where a build's time went from the build's log (benchmarks/site_build.py
``build_phases``): the line the hooks write (hooks/site_hooks.py ``BUILD_PHASES``), the last one when there are
several, none without it or when it is not in the hooks' form; and prints them as a table."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "hooks"))

from site_build import Row, build_phases, phase_table  # noqa: E402


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


def test_the_phase_table_lists_every_phase_of_every_row() -> None:
    def row(records: int, phases: dict[str, float] | None) -> Row:
        return Row("synthetic", records, 1.0, 1.0, 1.0, 1, 1, "x.html", 1.0, 1.0, phases=phases)

    text = phase_table([row(1000, {"load": 12.31, "generator": 7.4}), row(10000, {"load": 130.0, "post-build": 9.0})])
    lines = text.splitlines()
    assert lines[0] == "| records (cold build) | load s | generator s | post-build s |"
    assert lines[2] == "| 1,000 synthetic | 12.3 | 7.4 | — |"
    assert lines[3] == "| 10,000 synthetic | 130.0 | — | 9.0 |"
    assert phase_table([row(10, None)]) == ""
