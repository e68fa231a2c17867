"""Fixtures for the campaign tests: the real one-node Slurm cluster (one per session) and a user's checkout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, why_not
from slurm_repo import Repo, project_repo


@pytest.fixture(scope="session")
def slurm() -> Iterator[SlurmCluster]:
    reason = why_not()
    if reason is not None:
        pytest.skip(reason)
    cluster = SlurmCluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def user_repo(tmp_path: Path) -> Repo:
    """A user's checkout mid-work: on branch ``work`` with a staged change, an unstaged one and an untracked file."""
    repo = project_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "-b", "work")
    (repo.root / "notes.md").write_text("first\n", encoding="utf-8")
    repo.commit_all("notes")
    (repo.root / "notes.md").write_text("first\nstaged\n", encoding="utf-8")
    repo.git("add", "notes.md")
    (repo.root / "notes.md").write_text("first\nstaged\nunstaged\n", encoding="utf-8")
    (repo.root / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    return repo
