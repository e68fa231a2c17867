"""Real git repositories for the campaign tests, driven through the git CLI."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    """A real git repository driven through the git CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str) -> str:
        env = {**os.environ, **GIT_ENV}
        done = subprocess.run(["git", *args], cwd=self.root, env=env, check=True, capture_output=True, text=True)
        return done.stdout

    def commit_all(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def state(self) -> dict[str, str]:
        """What a user's checkout is: HEAD (symbolic and resolved), the index file's bytes, the work tree."""
        index = self.root / ".git" / "index"
        tree = {
            str(p.relative_to(self.root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(self.root).parts
        }
        return {
            "head": self.git("symbolic-ref", "HEAD").strip(),
            "head_sha": self.git("rev-parse", "HEAD").strip(),
            "index": hashlib.sha256(index.read_bytes()).hexdigest(),
            "staged": self.git("diff", "--cached", "--name-status"),
            "worktree": repr(sorted(tree.items())),
        }


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
