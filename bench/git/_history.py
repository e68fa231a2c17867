"""Which commit added each record: one ``git log`` over the records folder's whole history.

Records are append-only, so the commit that added a record is when its data last changed. A record in the work
tree that no commit added maps to :data:`UNCOMMITTED`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ._repo import RepositoryError, open_repo

__all__ = ["UNCOMMITTED", "RecordCommit", "parse_added_log", "record_commits"]

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


def record_commits(records_dir: Path) -> dict[Path, RecordCommit] | None:
    """Every ``*.json`` file under ``records_dir`` (its resolved path) -> the commit that added it, or
    :data:`UNCOMMITTED`. None when ``records_dir`` is not inside a git repository: the site then shows no
    provenance and still builds from a plain copy of the files."""
    try:
        repo = open_repo(records_dir)
    except RepositoryError:
        return None
    try:
        root = Path(str(repo.working_tree_dir)).resolve()
        rdir = records_dir.resolve()
        if not rdir.is_relative_to(root):  # a link out of the repository: git knows nothing of these files
            return None
        added: dict[str, RecordCommit] = {}
        if repo.head.is_valid():  # a repository without commits yet: every record is uncommitted
            rel = rdir.relative_to(root).as_posix()
            log = repo.git.log(
                "--diff-filter=A", "--name-only", "--no-renames", f"--format={_FORMAT}", "HEAD", "--", rel
            )
            added = parse_added_log(str(log))
        return {p: added.get(p.relative_to(root).as_posix(), UNCOMMITTED) for p in sorted(rdir.rglob("*.json"))}
    finally:
        repo.close()
