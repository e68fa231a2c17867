"""Opening a repository and naming commits: the errors a missing repository or base gives live here."""

from __future__ import annotations

from pathlib import Path

import git

__all__ = ["DEFAULT_BRANCHES", "RepositoryError", "commit_of", "open_repo", "resolve_base"]

DEFAULT_BRANCHES = ("origin/main", "main")
"""The main branch, in the order it is looked for when no base is given."""


class RepositoryError(Exception):
    """Not a git repository, or a commit that is not there (a missing base, HEAD without a commit)."""


def open_repo(path: Path, *, search_parents: bool = True) -> git.Repo:
    """The repository whose work tree is ``path`` (or, with ``search_parents``, contains it)."""
    if not path.exists():
        raise RepositoryError(f"not a git repository: {path} (no such folder)")
    try:
        return git.Repo(path, search_parent_directories=search_parents)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise RepositoryError(f"not a git repository: {path}") from None


def commit_of(repo: git.Repo, ref: str) -> str | None:
    """The full sha of the commit ``ref`` names, or None when it names none."""
    try:
        return str(repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")).strip() or None
    except git.GitCommandError:
        return None


def resolve_base(repo: git.Repo, ref: str | None) -> tuple[str, str]:
    """``(label, sha)`` of the base commit of a change.

    With ``ref`` given, that commit; without, the merge-base of HEAD with ``origin/main`` if it
    exists, else ``main``.
    """
    head = commit_of(repo, "HEAD")
    if head is None:
        raise RepositoryError("HEAD has no commit yet: commit the change first")
    if ref is not None:
        sha = commit_of(repo, ref)
        if sha is None:
            raise RepositoryError(f"base {ref} not found")
        return ref, sha
    for branch in DEFAULT_BRANCHES:
        tip = commit_of(repo, branch)
        if tip is None:
            continue
        try:
            sha = str(repo.git.merge_base(head, tip)).strip()
        except git.GitCommandError:
            raise RepositoryError(f"base {branch} not found: it shares no history with HEAD") from None
        return f"merge-base(HEAD, {branch})", sha
    raise RepositoryError(f"base {' or '.join(DEFAULT_BRANCHES)} not found: give one with --base REF")
