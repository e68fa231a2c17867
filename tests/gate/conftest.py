"""A real temporary git repository with a ``main`` base holding the shipped records."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import SHIPPED, GitRepo, new_record


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """``main`` holds the two shipped records; HEAD is a fresh branch ``feature`` off it."""
    root = tmp_path / "repo"
    (root / "records").mkdir(parents=True)
    shutil.copytree(SHIPPED, root / "records" / "eagle-fast-verify")
    r = GitRepo(root)
    r.git("init", "-q", "-b", "main")
    r.commit_all("base: shipped records", date="2026-12-01T09:00:00+00:00")
    r.git("checkout", "-q", "-b", "feature")
    return r


@pytest.fixture
def add_record(repo: GitRepo) -> Callable[..., str]:
    def _add(data: dict[str, Any] | None = None, rel: str | None = None, message: str = "add a record") -> str:
        data = data if data is not None else new_record()
        rel = rel or f"records/{data['experiment']}/{data['id']}.json"
        repo.write_json(rel, data)
        repo.commit_all(message)
        return rel

    return _add
