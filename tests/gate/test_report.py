"""The PR report: summary of each added record and its comparisons through bench.compare."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import pytest
from gate_helpers import BASELINE, EAGLE, PROJECT, GitRepo

from bench.gate import run_check
from bench.gate.report import build_report, render_json, render_markdown

EXP = "records/eagle-fast-verify"


@pytest.fixture
def with_settings(repo: GitRepo) -> GitRepo:
    shutil.copy(PROJECT / "benchbook.yaml", repo.root / "benchbook.yaml")
    repo.commit_all("settings")
    return repo


def test_report_summarises_and_compares(with_settings: GitRepo, add_record: Callable[..., str]) -> None:
    pytest.importorskip("bench.compare")
    rel = add_record()
    report = build_report(run_check(with_settings.root, "main"))
    md = render_markdown(report)
    assert f"### `{rel}`" in md
    assert "eagle-fast-verify / eagle3" in md and "transcribed" in md and "complete" in md
    assert "| 1 | —/30 | — | — | 83.5 |" in md  # the headline figure of the added record
    assert f"Against the latest comparable record: `{EXP}/{EAGLE}.json`" in md
    assert f"Against the baseline variant: `{EXP}/{BASELINE}.json`" in md
    assert "insufficient data" in md  # regression check with a one-record history
    data = render_json(report)
    (rec,) = data["records"]
    assert [c["kind"] for c in rec["comparisons"]] == ["previous", "baseline"]
    assert rec["comparisons"][1]["comparison"] is not None
    assert rec["comparisons"][0]["regression_flags"][0]["kind"] == "insufficient_data"


def test_report_lists_failures(repo: GitRepo) -> None:
    repo.git("rm", "-q", f"{EXP}/{BASELINE}.json")
    repo.commit_all("delete")
    md = render_markdown(build_report(run_check(repo.root, "main")))
    assert "fails" in md and f"`{EXP}/{BASELINE}.json`: deleted" in md
