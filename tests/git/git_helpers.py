"""A real git repository driven through the git CLI: the one helper of the git, gate and campaign tests (they import
it from here)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, date: str | None = None, env: dict[str, str] | None = None) -> str:
        dated = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
        full = {**os.environ, **GIT_ENV, **dated, **(env or {})}
        done = subprocess.run(["git", *args], cwd=self.root, env=full, check=True, capture_output=True, text=True)
        return done.stdout

    def write(self, rel: str, data: Any) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data) + "\n", encoding="utf-8")
        return path

    def write_json(self, rel: str, data: Any) -> Path:
        """``data`` as indented JSON (as records are written) at ``rel``."""
        return self.write(rel, json.dumps(data, indent=2) + "\n")

    def commit_all(self, message: str, *, date: str | None = None) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, date=date)
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
