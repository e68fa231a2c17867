"""Checks made before anything is launched or written, so that a run that cannot finish never starts.

* The records folder: it must be a folder (or creatable under one) where a file can be written; checked by
  really creating and removing a probe file, since permissions alone do not tell (root, read-only mounts).
* The open-file limit: every request in flight holds a socket in the client (and, for a launched server, one in
  the server, which inherits the limit). The soft ``RLIMIT_NOFILE`` is raised up to the hard limit when it is too
  low; when even the hard limit is too low the run is refused, naming the limit and the concurrency.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .config import ConfigError

__all__ = ["FD_MARGIN", "check_records_dir", "ensure_fd_limit", "fds_needed"]

FD_MARGIN = 256  # descriptors besides one socket per request in flight: Python, logs, pools, the engine's own


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_records_dir(records_dir: str, source: str) -> None:
    """Raise :class:`ConfigError` (``source``: the config file or the flag that set it) unless a record can be
    written under ``records_dir``. Creates nothing that stays."""
    path = Path(records_dir)
    base = _nearest_existing(path)
    if not base.is_dir():
        what = "is a file" if base == path else f"is under {base}, which is not a folder"
        raise ConfigError(source, "records_dir", f"a folder for records; {records_dir} {what}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".benchbook-write-probe.", dir=base)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = "" if base == path else f" (its nearest existing parent {base} cannot hold it)"
        raise ConfigError(source, "records_dir", f"a writable folder; {records_dir}: {reason}{where}") from None
    os.close(fd)
    os.unlink(probe)


def fds_needed(concurrency: int) -> int:
    return concurrency + FD_MARGIN


def ensure_fd_limit(concurrency: int) -> str | None:
    """Make sure ``concurrency`` sockets fit under the open-file limit; return what was changed (None: nothing).

    Raises :class:`ConfigError` on the ``levels`` field when the hard limit is too low (or cannot be read)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to check
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = fds_needed(concurrency)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return None
    if hard != resource.RLIM_INFINITY and hard < need:
        raise ConfigError(
            "RLIMIT_NOFILE",
            "levels",
            f"concurrency {concurrency} needs {need} open files ({concurrency} sockets + {FD_MARGIN}), but the "
            f"open-file limit is {soft} (hard limit {hard}, which this process cannot raise): raise it "
            f"(e.g. 'ulimit -n {need}' as allowed by the system) or lower the levels",
        )
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            "RLIMIT_NOFILE",
            "levels",
            f"concurrency {concurrency} needs {need} open files, the limit is {soft} and raising it failed ({exc})",
        ) from None
    return f"open-file limit raised from {soft} to {need} for concurrency {concurrency}"
