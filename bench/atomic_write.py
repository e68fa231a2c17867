"""Writing a file atomically: the whole new text or the old file, never half of either.

The text goes to a temporary file in the same folder, is flushed to disk, then renamed over the target
(``os.replace``) or, with ``exclusive``, linked to it (``os.link`` fails when the target exists, so two writers can
never claim the same file). Records, campaign plans and scripts, the PR report and ``bench frame --out`` are all
written this way.

The temporary file (:func:`temporary_file`) is created with the permissions ``open()`` gives a new file (read and
write for everyone, less the process's umask): ``tempfile.mkstemp`` would make it readable by its owner alone, and
the file it becomes (a record, a page of the built site that a web server running as another user serves) with it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["new_file_mode", "temporary_file", "write_atomic"]

NEW_FILE_MODE = 0o666  # what open() asks for a new file; the umask takes its share


def new_file_mode(folder: Path) -> int:
    """The permission bits ``open()`` gives a new file in ``folder`` now (``NEW_FILE_MODE`` less the umask), seen on
    a file made there and removed (reading the umask means setting it, which other threads would see)."""
    fd, tmp = temporary_file(folder, ".mode-probe.")
    try:
        return os.fstat(fd).st_mode & 0o777
    finally:
        os.close(fd)
        os.unlink(tmp)


def temporary_file(folder: Path, prefix: str) -> tuple[int, str]:
    """A new file in ``folder`` named ``<prefix><random>.tmp``, open for writing: (its descriptor, its path). Its
    permissions are those of a file ``open()`` creates."""
    while True:
        tmp = os.path.join(folder, f"{prefix}{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE), tmp
        except FileExistsError:  # a name another writer drew: draw again
            continue


def write_atomic(path: Path, text: str | bytes, *, exclusive: bool = False, durable: bool = True) -> None:
    """Write ``text`` (UTF-8; bytes as they are) to ``path``, creating its folder; with ``exclusive``,
    ``FileExistsError`` when the file is already there. On any error the target is untouched and the temporary
    file removed. ``durable=False`` skips the fsync: for a cache, whose entries a crash may lose but never tear
    (the rename still makes a file appear whole or not at all)."""
    try:
        fd, tmp = temporary_file(path.parent, f".{path.name}.")
    except FileNotFoundError:  # its folder is not there yet (asked only then: a cache writes thousands of files)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = temporary_file(path.parent, f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if exclusive:
            os.link(tmp, path)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
