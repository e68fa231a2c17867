"""The commit a work tree is at, and whether it differs from that commit (the measured code's identity)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

from ._repo import RepositoryError, open_repo

__all__ = ["CheckoutState", "checkout_state"]


@dataclass(frozen=True)
class CheckoutState:
    commit: str | None  # None: outside git, or a repository without commits
    dirty: bool | None  # None: unknown (outside git)


def checkout_state(root: Path, *, untracked_ignored: tuple[str, ...] = ()) -> CheckoutState:
    """The commit of the work tree at ``root`` (exactly there: parent folders are not searched) and its dirty flag.

    Dirty: a tracked file differs from the commit, or an untracked (not git-ignored) file exists outside the
    ``untracked_ignored`` path prefixes (e.g. ``records/``: records written by earlier runs do not make the code
    dirty). Outside a git repository both are None.
    """
    try:
        repo = open_repo(root, search_parents=False)
    except RepositoryError:
        return CheckoutState(None, None)
    try:
        try:
            commit: str | None = repo.head.commit.hexsha
        except ValueError:  # a repository without commits
            commit = None
        untracked = any(not path.startswith(untracked_ignored) for path in repo.untracked_files)
        return CheckoutState(commit, bool(repo.is_dirty(untracked_files=False) or untracked))
    except git.GitCommandError:
        return CheckoutState(None, None)
    finally:
        repo.close()
