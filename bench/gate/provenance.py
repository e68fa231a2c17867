"""Which commit added each record, for the site: one ``git log`` over the whole history.

``git_provenance(repo_root, records_dir)`` maps each record's repository-relative path to the commit
that ADDED it; a record in the work tree that no commit added maps to ``UNCOMMITTED``. A folder that
is not a git repository gives ``{}``: the site still builds from a plain copy of the files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import git

__all__ = ["UNCOMMITTED", "RecordCommit", "git_provenance", "last_changed", "parse_added_log", "repository_url"]

# Starts each commit's header line; the unit separator cannot occur in a record's path (ids are slugs).
# (Not \x1e: Python's splitlines() and strip() treat it as a line break / whitespace.)
_MARK = "bench-commit\x1f"
_FORMAT = f"{_MARK}%H%x1f%h%x1f%an%x1f%aI%x1f%s"


@dataclass(frozen=True)
class RecordCommit:
    sha: str | None
    short_sha: str | None
    author: str | None
    date: datetime | None
    subject: str | None
    uncommitted: bool = False


UNCOMMITTED = RecordCommit(sha=None, short_sha=None, author=None, date=None, subject=None, uncommitted=True)


def _repo(repo_root: Path) -> git.Repo | None:
    try:
        return git.Repo(repo_root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def parse_added_log(output: str) -> dict[str, RecordCommit]:
    """Parse ``git log --diff-filter=A --name-only --format=<_FORMAT>`` (newest first).

    A path added more than once (deleted and added again) keeps its most recent addition: that is the
    file now in the tree.
    """
    out: dict[str, RecordCommit] = {}
    current: RecordCommit | None = None
    for line in output.split("\n"):
        if line.startswith(_MARK):
            sha, short, author, date, subject = line[len(_MARK) :].split("\x1f", 4)
            current = RecordCommit(sha, short, author, datetime.fromisoformat(date).astimezone(UTC), subject)
        elif line.strip() and current is not None:
            out.setdefault(line.strip(), current)  # newest first: the first seen is the latest addition
    return out


def git_provenance(repo_root: Path, records_dir: Path) -> dict[str, RecordCommit]:
    """Record path (relative to ``repo_root``, POSIX) -> the commit that added it."""
    repo = _repo(repo_root)
    if repo is None or not repo.head.is_valid():
        return {}
    root = Path(str(repo.working_tree_dir)).resolve()
    rdir = (records_dir if records_dir.is_absolute() else root / records_dir).resolve()
    try:
        rel_dir = rdir.relative_to(root).as_posix()
    except ValueError:
        return {}
    log = str(
        repo.git.log("--diff-filter=A", "--name-only", "--no-renames", f"--format={_FORMAT}", "HEAD", "--", rel_dir)
    )
    added = parse_added_log(log)
    out: dict[str, RecordCommit] = {}
    if rdir.is_dir():
        for path in sorted(rdir.rglob("*.json")):
            rel = path.relative_to(root).as_posix()
            out[rel] = added.get(rel, UNCOMMITTED)
    return out


def last_changed(repo_root: Path, paths: Iterable[Path]) -> datetime | None:
    """When any of ``paths`` last changed in a commit (UTC); None outside git or when none was committed."""
    repo = _repo(repo_root)
    if repo is None or not repo.head.is_valid():
        return None
    root = Path(str(repo.working_tree_dir)).resolve()
    rels = []
    for p in paths:
        full = (p if p.is_absolute() else root / p).resolve()
        try:
            rels.append(full.relative_to(root).as_posix())
        except ValueError:
            continue
    if not rels:
        return None
    stamp = str(repo.git.log("-1", "--format=%aI", "HEAD", "--", *rels)).strip()
    return datetime.fromisoformat(stamp).astimezone(UTC) if stamp else None


def repository_url(repo_root: Path) -> str | None:
    """``repository_url`` from ``benchbook.yaml`` (optional key; a missing or unreadable file gives None)."""
    import yaml

    path = repo_root / "benchbook.yaml"
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    url = data.get("repository_url") if isinstance(data, dict) else None
    return url.rstrip("/") if isinstance(url, str) and url.strip() else None
