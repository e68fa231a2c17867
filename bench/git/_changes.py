"""What a change does to the tree: ``git diff --name-status`` between the base and HEAD (or the work tree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import git

__all__ = ["Change", "ChangeKind", "diff_changes", "parse_name_status"]

ChangeKind = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]

_KINDS: dict[str, ChangeKind] = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type-changed",
}


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    path: str  # repository-relative, POSIX; for renames and copies the new path
    old_path: str | None = None  # renames and copies: where it came from


def parse_name_status(output: str) -> list[Change]:
    """Parse ``git diff --name-status -z`` output (NUL-separated; renames carry two paths)."""
    parts = output.split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(parts):
        status = parts[i]
        if not status:
            i += 1
            continue
        letter = status[0]
        kind = _KINDS.get(letter)
        if kind is None:
            raise ValueError(f"unexpected git status {status!r}")
        if letter in "RC":
            changes.append(Change(kind=kind, old_path=parts[i + 1], path=parts[i + 2]))
            i += 3
        else:
            changes.append(Change(kind=kind, path=parts[i + 1]))
            i += 2
    return changes


def diff_changes(repo: git.Repo, base: str, *, include_worktree: bool) -> list[Change]:
    """Changes from ``base`` to HEAD, or to the work tree (tracked and untracked files) when asked.

    Only exact renames count as renames: otherwise git would pair a deleted record with a similar new one
    and report "renamed" where the author deleted one record and added another.
    """
    args = ["--name-status", "-z", "--find-renames=100%", "--no-color", base]
    if not include_worktree:
        args.append("HEAD")
    changes = parse_name_status(str(repo.git.diff(*args)))
    if include_worktree:
        untracked = str(repo.git.ls_files("--others", "--exclude-standard", "-z"))
        changes += [Change(kind="added", path=p) for p in untracked.split("\0") if p]
    return changes
