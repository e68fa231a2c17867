"""Checks made before anything is launched or written, so that a run that cannot finish never starts.

* The records folder: it must be a folder (or creatable under one) where a file can be written; checked by
  really creating and removing a probe file, since permissions alone do not tell (root, read-only mounts).
* Tensor parallelism a launched server cannot take: the attention heads of the model (its ``config.json``) must
  divide by the tp size, and its key/value heads divide by it or it by them, as SGLang and vLLM require; a run that
  would only fail after a GPU machine has started and loaded the model is refused here, naming the numbers.
* The open-file limit: every request in flight holds a socket in the client (and, for a launched server, one in
  the server, which inherits the limit). The soft ``RLIMIT_NOFILE`` is raised up to the hard limit when it is too
  low; when even the hard limit is too low the run is refused, naming the limit and the concurrency.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .config import ConfigError

__all__ = ["FD_MARGIN", "TP_ARGS", "check_records_dir", "check_tensor_parallel", "ensure_fd_limit", "fds_needed"]

TP_ARGS = ("tp-size", "tp", "tensor-parallel-size")
"""Arguments that set the tensor-parallel size (SGLang ``--tp-size``/``--tp``, vLLM ``--tensor-parallel-size``)."""

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


def _tp_size(server_args: dict[str, Any]) -> int | None:
    for key, value in server_args.items():
        if (
            key.lstrip("-").replace("_", "-").lower() in TP_ARGS
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            return value
    return None


def check_tensor_parallel(server_args: dict[str, Any], model_path: str | None, source: str) -> None:
    """Raise :class:`ConfigError` when the model in ``model_path`` (a local folder with ``config.json``) cannot be
    split over the tp size the server arguments ask for. Says nothing when either is unknown."""
    tp = _tp_size(server_args)
    if tp is None or tp <= 1 or not model_path:
        return
    config = Path(model_path) / "config.json"
    try:
        data = json.loads(config.read_text("utf-8"))
    except (OSError, ValueError):
        return  # not a local model folder (a hub id, a GGUF file): the server itself will say
    if not isinstance(data, dict):
        return
    heads, kv = data.get("num_attention_heads"), data.get("num_key_value_heads", data.get("num_attention_heads"))
    if isinstance(heads, int) and heads % tp:
        raise ConfigError(
            source,
            "server_args.tp-size",
            f"a tensor-parallel size that divides the model's {heads} attention heads ({config}); got {tp}",
        )
    if isinstance(kv, int) and kv % tp and tp % kv:
        raise ConfigError(
            source,
            "server_args.tp-size",
            f"a tensor-parallel size that divides the model's {kv} key/value heads, or that they divide ({config}); "
            f"got {tp}",
        )


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
