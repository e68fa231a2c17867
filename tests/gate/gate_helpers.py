"""Helpers for the gate tests: a real git repository driven through the git CLI, record builders."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
SHIPPED = PROJECT / "records" / "eagle-fast-verify"
EAGLE = "20261130T231000Z-eagle3-339e97f"
BASELINE = "20261130T231000Z-baseline-797fdbd"

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "git"))

from git_helpers import Repo as GitRepo  # noqa: E402  (the one real-repository helper of the tests)

__all__ = ["BASELINE", "EAGLE", "PROJECT", "SHIPPED", "GitRepo", "new_record", "shipped"]


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
