"""Committing files on a branch without touching the user's checkout: no checkout, no index, no HEAD.

The commit is built with git's plumbing through gitpython, on a *temporary* index file (``GIT_INDEX_FILE``):
``read-tree`` of the branch's tip (or of ``base`` for a new branch), the files' blobs written to the object
store, ``update-index --index-info``, ``write-tree``, ``commit-tree``, and ``update-ref`` with the old tip
as a compare-and-swap (a branch moved by someone else meanwhile makes it fail rather than lose their commit).
The working tree, ``.git/index`` and ``HEAD`` are never read for writing; a branch checked out in any
worktree of the repository is refused, since moving it would change that worktree's files under its user.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import git

from ._repo import RepositoryError, commit_of, open_repo

__all__ = ["DEFAULT_BASES", "CommitError", "CommitResult", "commit_files"]

_ZERO = "0" * 40
DEFAULT_BASES = ("origin/main", "main", "HEAD")
"""Where a new branch starts, the first that exists: the records then reach review on top of main alone."""


class CommitError(Exception):
    """The records cannot be committed (not a repository, a bad or checked-out branch, a conflicting file)."""


@dataclass
class CommitResult:
    branch: str
    commit: str | None  # None: nothing new to commit
    parent: str
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # already on the branch, byte for byte


def _checked_out_branches(repo: git.Repo) -> set[str]:
    out = str(repo.git.worktree("list", "--porcelain"))
    return {line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("branch ")}


def _write_blobs(repo: git.Repo, sources: list[Path], tmp: Path) -> list[str]:
    """Store each file as a blob (one ``hash-object --stdin-paths`` for all); their ids, in order."""
    if not sources:
        return []
    paths = tmp / "paths"
    paths.write_text("".join(f"{p.resolve()}\n" for p in sources), encoding="utf-8")
    with paths.open("rb") as fh:
        out = str(repo.git.hash_object("-w", "--no-filters", "--stdin-paths", istream=fh))
    shas = out.split()
    if len(shas) != len(sources):
        raise CommitError(f"git hash-object returned {len(shas)} ids for {len(sources)} files")
    return shas


def commit_files(
    repo_path: Path,
    branch: str,
    files: Mapping[str, Path],
    message: str,
    *,
    base: str | None = None,
) -> CommitResult:
    """Commit ``files`` (repository-relative POSIX path -> the file to store there) on ``branch``, created from
    ``base`` (default: the first of :data:`DEFAULT_BASES`) when it does not exist. A path already on the
    branch with the same content is skipped; with other content it is refused (records are append-only)."""
    try:
        repo = open_repo(repo_path)
    except RepositoryError as exc:
        raise CommitError(str(exc)) from None
    try:
        return _commit(repo, branch, files, message, base)
    finally:
        repo.close()


def _commit(repo: git.Repo, branch: str, files: Mapping[str, Path], message: str, base: str | None) -> CommitResult:
    try:
        repo.git.check_ref_format("--branch", branch)
    except git.GitCommandError:
        raise CommitError(f"--commit {branch!r}: not a valid branch name") from None
    ref = f"refs/heads/{branch}"
    if ref in _checked_out_branches(repo):
        raise CommitError(
            f"--commit {branch}: that branch is checked out in a worktree; name a branch that is not checked out "
            "(the collector never moves a checked-out branch)"
        )
    old = commit_of(repo, ref)
    bases = (base,) if base is not None else DEFAULT_BASES
    parent = old or next((sha for b in bases if (sha := commit_of(repo, b)) is not None), None)
    if parent is None:
        raise CommitError(f"--commit {branch}: the branch does not exist and no base ({', '.join(bases)}) has a commit")
    existing: dict[str, str] = {}
    listing = str(repo.git.ls_tree("-r", "--full-tree", parent, "--", *sorted({p.split("/")[0] for p in files})))
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        existing[path] = meta.split()[2]
    result = CommitResult(branch=branch, commit=None, parent=parent)
    entries: list[str] = []
    conflicts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as tmp_name:
        tmp = Path(tmp_name)
        paths = sorted(files)
        for path, sha in zip(paths, _write_blobs(repo, [files[p] for p in paths], tmp), strict=True):
            if path in existing:
                (result.unchanged if existing[path] == sha else conflicts).append(path)
                continue
            entries.append(f"100644 {sha}\t{path}")
            result.added.append(path)
        if conflicts:
            raise CommitError(
                f"--commit {branch}: already on the branch with other content (records are append-only): "
                + ", ".join(conflicts[:5])
            )
        if not entries:
            return result
        listing_file = tmp / "entries"
        listing_file.write_text("\n".join(entries) + "\n", encoding="utf-8")
        with repo.git.custom_environment(GIT_INDEX_FILE=str(tmp / "index")):
            repo.git.read_tree(parent)
            with listing_file.open("rb") as fh:
                repo.git.update_index("--index-info", istream=fh)
            tree = str(repo.git.write_tree()).strip()
    try:
        commit = str(repo.git.commit_tree(tree, "-p", parent, "-m", message)).strip()
    except git.GitCommandError as exc:
        raise CommitError(f"--commit {branch}: git could not create the commit: {exc.stderr.strip()}") from None
    try:
        repo.git.update_ref("-m", f"bench collect: {len(entries)} record(s)", ref, commit, old or _ZERO)
    except git.GitCommandError as exc:
        raise CommitError(
            f"--commit {branch}: the branch moved while committing; run the collector again ({exc.stderr.strip()})"
        ) from None
    result.commit = commit
    return result
