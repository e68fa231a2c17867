"""The files of one folder at a commit, read from git's object store (no checkout)."""

from __future__ import annotations

import git

__all__ = ["files_at"]


def files_at(repo: git.Repo, commit: str, folder: str) -> dict[str, bytes]:
    """Every file under ``folder`` (repository-relative, POSIX) at ``commit``: repository-relative path -> content.
    A folder that is not there, or is a file, gives ``{}``."""
    tree = repo.commit(commit).tree
    try:
        sub = tree / folder
    except KeyError:
        return {}
    if not isinstance(sub, git.Tree):  # a file, not a folder
        return {}
    out: dict[str, bytes] = {}
    for item in sub.traverse():
        if isinstance(item, git.Blob):
            out[str(item.path)] = item.data_stream.read()
    return out
