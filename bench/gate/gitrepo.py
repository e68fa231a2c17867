"""Opening a repository and resolving the base of a change: the environment errors live here."""

from __future__ import annotations

from pathlib import Path

import git

__all__ = ["DEFAULT_BRANCHES", "GateEnvError", "open_repo", "resolve_base"]

# The main branch, in the order it is looked for when no base is given.
DEFAULT_BRANCHES = ("origin/main", "main")


class GateEnvError(Exception):
    """A usage or environment problem (not a git repository, missing base): exit code 2."""


def open_repo(path: Path) -> git.Repo:
    """The repository whose work tree is ``path`` (or contains it)."""
    if not path.exists():
        raise GateEnvError(f"not a git repository: {path} (no such folder)")
    try:
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GateEnvError(f"not a git repository: {path}") from None


def _commit_of(repo: git.Repo, ref: str) -> str | None:
    try:
        return str(repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")).strip() or None
    except git.GitCommandError:
        return None


def resolve_base(repo: git.Repo, ref: str | None) -> tuple[str, str]:
    """``(label, sha)`` of the base commit.

    With ``ref`` given, that commit; without, the merge-base of HEAD with ``origin/main`` if it
    exists, else ``main``.
    """
    head = _commit_of(repo, "HEAD")
    if head is None:
        raise GateEnvError("HEAD has no commit yet: commit the change first")
    if ref is not None:
        sha = _commit_of(repo, ref)
        if sha is None:
            raise GateEnvError(f"base {ref} not found")
        return ref, sha
    for branch in DEFAULT_BRANCHES:
        tip = _commit_of(repo, branch)
        if tip is None:
            continue
        try:
            sha = str(repo.git.merge_base(head, tip)).strip()
        except git.GitCommandError:
            raise GateEnvError(f"base {branch} not found: it shares no history with HEAD") from None
        return f"merge-base(HEAD, {branch})", sha
    raise GateEnvError(f"base {' or '.join(DEFAULT_BRANCHES)} not found: give one with --base REF")
