"""Real git repositories for the campaign tests, driven through the git CLI."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "git"))

from git_helpers import GIT_ENV, Repo  # noqa: E402  (the one real-repository helper of the tests)

__all__ = ["GIT_ENV", "PROJECT", "Repo", "project_repo"]


def project_repo(root: Path, *, site: bool = False) -> Repo:
    """A repository on ``main`` holding the shipped records (and, with ``site``, what the PR check builds)."""
    root.mkdir(parents=True)
    shutil.copytree(PROJECT / "records", root / "records")
    if site:
        for name in ("mkdocs.yml", "benchbook.yaml"):
            if (PROJECT / name).exists():
                shutil.copy(PROJECT / name, root / name)
        for name in ("docs", "hooks"):
            shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        (root / "scripts").mkdir()
        shutil.copy(PROJECT / "scripts" / "pr_check.sh", root / "scripts" / "pr_check.sh")
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit_all("base")
    return repo
