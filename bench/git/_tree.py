"""The files of one folder at a commit, read from git's object store (no checkout), each read only when asked."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import git

__all__ = ["TreeFile", "blob_id", "files_at"]


@dataclass(frozen=True)
class TreeFile:
    """A file of a tree: its git object id (the same for the same bytes at any commit, or in the work tree:
    :func:`blob_id`) and how to read its bytes. Nothing is held: a tree of 10,000 records is ids and paths."""

    oid: str
    read: Callable[[], bytes]


def blob_id(data: bytes) -> str:
    """The id git gives a file of these bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def files_at(repo: git.Repo, commit: str, folder: str) -> dict[str, TreeFile]:
    """Every file under ``folder`` (repository-relative, POSIX) at ``commit``: repository-relative path -> the file,
    its bytes read from the object store when asked. A folder that is not there, or is a file, gives ``{}``."""
    tree = repo.commit(commit).tree
    try:
        sub = tree / folder
    except KeyError:
        return {}
    if not isinstance(sub, git.Tree):  # a file, not a folder
        return {}
    out: dict[str, TreeFile] = {}
    for item in sub.traverse():
        if isinstance(item, git.Blob):
            out[str(item.path)] = TreeFile(item.hexsha, _reader(repo, item.binsha))
    return out


def _reader(repo: git.Repo, binsha: bytes) -> Callable[[], bytes]:
    def read() -> bytes:
        data: bytes = repo.odb.stream(binsha).read()
        return data

    return read
