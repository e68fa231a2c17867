"""Helpers for the gate tests: a real git repository driven through the git CLI, record builders."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
SHIPPED = PROJECT / "records" / "eagle-fast-verify"
EAGLE = "20261130T231000Z-eagle3-339e97f"
BASELINE = "20261130T231000Z-baseline-797fdbd"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitRepo:
    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        full_env = {**os.environ, **GIT_ENV, **(env or {})}
        done = subprocess.run(["git", *args], cwd=self.root, env=full_env, check=True, capture_output=True, text=True)
        return done.stdout

    def commit_all(self, message: str, *, date: str | None = None) -> str:
        self.git("add", "-A")
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else None
        self.git("commit", "-q", "-m", message, env=env)
        return self.git("rev-parse", "HEAD").strip()

    def write_json(self, rel: str, data: Any) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return path


def shipped(record_id: str = EAGLE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHIPPED / f"{record_id}.json").read_text(encoding="utf-8"))
    return data


def new_record(record_id: str = "20261201T101500Z-eagle3-abc1234", tok_s: float = 83.5) -> dict[str, Any]:
    """A valid record distinct from the shipped ones: a new id and a different figure."""
    data = shipped(EAGLE)
    data["id"] = record_id
    data["created_at"] = "2026-12-01T10:15:00Z"
    data["levels"][0]["per_request_tok_s"]["value"] = tok_s
    return data
