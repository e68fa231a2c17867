"""Git provenance on the site: which commit added each record, and when a page's data last changed.

:func:`load_git_info` is the I/O edge: ONE ``git log`` over the records folder for all records
(``bench.git.record_commits``), run once per build by the adapter (``hooks/``, ``bench render``).
The result, :class:`GitInfo`, is plain data handed to the pure renderers. Outside a git repository it is
empty and pages simply show no provenance.

Records are append-only (reviewed by pull request), so the commit that added a record is when its data last
changed; a page's data last changed with the newest commit that added one of its records, or is
"uncommitted" while one of them is not committed yet (e.g. under ``mkdocs serve`` while adding a record).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.git import UNCOMMITTED, RecordCommit, record_commits
from bench.record.load import LoadedRecord

from ._escape import md_text

__all__ = ["GitInfo", "commit_markdown", "last_changed_line", "load_git_info"]


@dataclass(frozen=True)
class GitInfo:
    """Record id -> the commit that added it (``uncommitted`` ones included); empty outside git."""

    commits: Mapping[str, RecordCommit] = field(default_factory=dict)
    repository_url: str | None = None  # commits link to <repository_url>/commit/<sha> when set

    @property
    def available(self) -> bool:
        return bool(self.commits)

    def of(self, record_id: str) -> RecordCommit | None:
        return self.commits.get(record_id)

    def last_changed(self, record_ids: Iterable[str]) -> RecordCommit | None:
        """The newest commit that added one of the records; an uncommitted one wins; None if none is known."""
        found = [c for rid in record_ids if (c := self.commits.get(rid)) is not None]
        for c in found:
            if c.uncommitted:
                return c
        dated = [c for c in found if c.date is not None]
        return max(dated, key=lambda c: (c.date, c.sha or "")) if dated else None


def _sha_markdown(commit: RecordCommit, repository_url: str | None) -> str:
    short = md_text(commit.short_sha or (commit.sha or "")[:7])
    if repository_url and commit.sha:
        return f"[`{short}`]({repository_url}/commit/{commit.sha})"
    return f"`{short}`"


def commit_markdown(commit: RecordCommit | None, repository_url: str | None, *, with_author: bool = True) -> str:
    """``abc1234`` (linked when a repository URL is set) · author · date; "uncommitted"; "—" when unknown."""
    if commit is None:
        return "—"
    if commit.uncommitted:
        return "uncommitted"
    parts = [_sha_markdown(commit, repository_url)]
    if with_author and commit.author:
        parts.append(md_text(commit.author))
    if commit.date is not None:
        parts.append(commit.date.strftime("%Y-%m-%d"))
    return " · ".join(parts)


def last_changed_line(git: GitInfo, record_ids: Sequence[str]) -> str:
    """'*Data last changed: 2026-12-01 (commit abc1234).*', or '' when git says nothing about these records."""
    c = git.last_changed(record_ids)
    if c is None:
        return ""
    if c.uncommitted:
        return "*Data last changed: uncommitted (a record on this page is not committed yet).*\n"
    when = c.date.strftime("%Y-%m-%d %H:%M UTC") if c.date else "date unknown"
    return f"*Data last changed: {when} (commit {_sha_markdown(c, git.repository_url)}).*\n"


def load_git_info(records: Sequence[LoadedRecord], records_dir: Path, repository_url: str | None) -> GitInfo:
    """One pass over git history for every record; an empty GitInfo when ``records_dir`` is not in a repository."""
    by_path = record_commits(records_dir)
    if by_path is None:
        return GitInfo(repository_url=repository_url)
    commits = {lr.record.id: by_path.get(lr.path.resolve(), UNCOMMITTED) for lr in records}
    return GitInfo(commits=commits, repository_url=repository_url)
