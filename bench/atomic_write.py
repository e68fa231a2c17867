"""Writing a file atomically: the whole new text or the old file, never half of either.

The text goes to a temporary file in the same folder, is flushed to disk, then renamed over the target
(``os.replace``) or, with ``exclusive``, linked to it (``os.link`` fails when the target exists, so two writers can
never claim the same file). Records, campaign plans and scripts, the PR report and ``bench frame --out`` are all
written this way.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str | bytes, *, exclusive: bool = False, durable: bool = True) -> None:
    """Write ``text`` (UTF-8; bytes as they are) to ``path``, creating its folder; with ``exclusive``,
    ``FileExistsError`` when the file is already there. On any error the target is untouched and the temporary
    file removed. ``durable=False`` skips the fsync: for a cache, whose entries a crash may lose but never tear
    (the rename still makes a file appear whole or not at all)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
