"""Rendered Markdown compared with golden files in tests/site/golden/.

After an intended change, regenerate them with ``BENCHBOOK_UPDATE_GOLDEN=1 pytest tests/site`` and review the diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from site_helpers import (
    BASELINE_ID,
    EAGLE_ID,
    FX_BASELINE_ID,
    FX_EAGLE_ID,
    HOSTILE_ID,
    fixture,
    fixture_site,
    shipped,
    shipped_site,
)

import bench
from bench.dataframe import frame_csv
from bench.site import (
    comparison_markdown,
    dead_ends_index,
    experiment_markdown,
    history_index,
    history_markdown,
    record_markdown,
    records_index,
    site_comparison,
    site_record_markdown,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("BENCHBOOK_UPDATE_GOLDEN") == "1"

CASES: dict[str, Callable[[], str]] = {
    "record-transcribed-baseline.md": lambda: record_markdown(shipped(BASELINE_ID)),
    "record-transcribed-eagle3.md": lambda: record_markdown(shipped(EAGLE_ID)),
    "record-measured-partial-eagle3.md": lambda: record_markdown(fixture(FX_EAGLE_ID)),
    "record-hostile.md": lambda: record_markdown(fixture(HOSTILE_ID)),
    "levels-measured-eagle3.csv": lambda: frame_csv(bench.frame([fixture(FX_EAGLE_ID)])),
    "compare-transcribed.md": lambda: _compare_shipped(),
    "compare-measured-repeats.md": lambda: _compare_repeats(),
    "experiment-fixture-repeats.md": lambda: experiment_markdown(fixture_site(), "fixture-repeats"),
    "history-index-fixtures.md": lambda: history_index(fixture_site()),
    "history-fixture-baseline.md": lambda: _history_of(FX_BASELINE_ID),
    "record-page-in-site-repeats.md": lambda: _record_in_site(),
    "experiment-eagle-fast-verify.md": lambda: experiment_markdown(shipped_site(), "eagle-fast-verify"),
    "records-index-fixtures.md": lambda: records_index(fixture_site()),
    "dead-ends-index.md": lambda: _dead_ends_index(),
}


def _dead_ends_index() -> str:
    site = shipped_site()
    return dead_ends_index(site.dead_ends, site.errors)


def _compare_shipped() -> str:
    site = shipped_site()
    return comparison_markdown(site_comparison(site, shipped(BASELINE_ID), shipped(EAGLE_ID)), "page.md", site)


def _compare_repeats() -> str:
    site = fixture_site()
    base, cand = site.latest_per_variant("fixture-repeats")
    return comparison_markdown(site_comparison(site, base, cand), "page.md", site)


def _history_of(record_id: str) -> str:
    site = fixture_site()
    return history_markdown(site, site.configuration_of[record_id])


def _record_in_site() -> str:
    site = fixture_site()
    latest = site.latest_per_variant("fixture-repeats")[0]
    return site_record_markdown(site, latest)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    got = CASES[name]()
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; create it with BENCHBOOK_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8"), f"{name} differs from its golden file (see the module docstring)"
