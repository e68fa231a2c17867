"""The site benchmark reads the offline check's time from the build's log (benchmarks/site_build.py): the line the
hooks write (hooks/site_hooks.py OFFLINE_TIMING), the last one when there are several, none without it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "hooks"))

from site_build import offline_seconds  # noqa: E402


def test_the_logged_time_is_read() -> None:
    from site_hooks import OFFLINE_TIMING

    log = f"INFO    -  benchbook: {OFFLINE_TIMING} 1.25 s\nINFO    -  Documentation built in 9.1 seconds\n"
    assert offline_seconds(log) == 1.25
    assert offline_seconds(log + f"INFO    -  benchbook: {OFFLINE_TIMING} 12 s\n") == 12.0
    assert offline_seconds("INFO    -  Documentation built in 0.9 seconds\n") is None  # a plain MkDocs site
