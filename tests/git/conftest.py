"""A real temporary git repository for the ``bench.git`` tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from git_helpers import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty repository on ``main`` (no commit yet)."""
    root = tmp_path / "repo"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q", "-b", "main")
    return r


@pytest.fixture
def user_repo(repo: Repo) -> Repo:
    """A user's checkout mid-work: ``main`` holds a record; the user is on branch ``work`` with a staged change, an
    unstaged one and an untracked file."""
    repo.write("records/camp/20261130T000000Z-x-abcdef0.json", {"n": 0})
    repo.commit_all("base")
    repo.git("checkout", "-q", "-b", "work")
    repo.write("notes.md", "first\n")
    repo.commit_all("notes")
    repo.write("notes.md", "first\nstaged\n")
    repo.git("add", "notes.md")
    repo.write("notes.md", "first\nstaged\nunstaged\n")
    repo.write("scratch.txt", "untracked\n")
    return repo
