"""Git provenance on the site, on a real temporary repository: one git log, committed and uncommitted records."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from unittest import mock

import git
import pytest
from site_helpers import FIXTURES, FX_BASELINE_ID, FX_EAGLE_ID, HOSTILE_ID

from bench.settings import Settings
from bench.site import load_site, records_index, site_pages

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "2026-12-05T08:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-12-05T08:00:00+00:00",
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two fixture records committed; the hostile one added to the work tree but not committed."""
    root = tmp_path / "repo"
    exp = root / "records" / "eagle-fast-verify"
    exp.mkdir(parents=True)
    for rid in (FX_BASELINE_ID, FX_EAGLE_ID):
        shutil.copy(FIXTURES / "eagle-fast-verify" / f"{rid}.json", exp / f"{rid}.json")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "add two records")
    hostile = root / "records" / "fixture-hostile"
    hostile.mkdir()
    shutil.copy(FIXTURES / "fixture-hostile" / f"{HOSTILE_ID}.json", hostile / f"{HOSTILE_ID}.json")
    return root


def test_records_index_and_record_pages_show_the_adding_commit(repo: Path) -> None:
    sha = _git(repo, "rev-parse", "HEAD").strip()
    with mock.patch.object(git.Git, "_call_process", autospec=True, side_effect=git.Git._call_process) as spy:
        site = load_site(repo / "records", git=True)
    assert [c.args[1] for c in spy.call_args_list].count("log") == 1  # one pass for all records
    index = records_index(site)
    assert "Added in commit" in index
    assert f"`{sha[:7]}` · Ada Tester · 2026-12-05" in index
    row = next(ln for ln in index.splitlines() if "fixture\\-hostile](" in ln)
    assert row.rstrip(" |").endswith("uncommitted")
    assert "*Data last changed: uncommitted" in index
    pages = dict(site_pages(site))
    page = pages[f"records/eagle-fast-verify/{FX_EAGLE_ID}.md"]
    assert f"| Added in commit | `{sha[:7]}` · Ada Tester · 2026-12-05 |" in page
    assert f"*Data last changed: 2026-12-05 08:00 UTC (commit `{sha[:7]}`).*" in page
    assert "uncommitted" in pages[f"records/fixture-hostile/{HOSTILE_ID}.md"]


def test_commit_links_when_repository_url_is_set(repo: Path) -> None:
    sha = _git(repo, "rev-parse", "HEAD").strip()
    settings = Settings(repository_url="https://git.example.invalid/o/benchbook/")
    site = load_site(repo / "records", settings=settings, git=True)
    assert f"[`{sha[:7]}`](https://git.example.invalid/o/benchbook/commit/{sha})" in records_index(site)


def test_outside_git_provenance_is_simply_absent(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "records")
    site = load_site(tmp_path / "records", git=True)
    assert not site.git.available
    index = records_index(site)
    assert "Added in commit" not in index and "Data last changed" not in index
