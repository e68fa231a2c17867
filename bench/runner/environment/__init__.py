"""Capturing the environment a benchmark ran in: allow-listed, secret-free, never guessed.

What defines comparability (GPU model and count, driver, CUDA runtime, NCCL version, every ``NCCL_*``
variable, engine / FlashInfer / PyTorch versions) goes into the record's context fields; host facts
(CPU, memory, OS, kernel, Python, hostname) go into ``info``, which never splits a comparison.

One module per source: the variable allow-list (``_allowlist``), ``nvidia-smi`` (``_nvidia_smi``), the engine's
interpreter (``_engine_probe``), the host (``_host``); the measured checkout's commit comes from ``bench.git``.
A fact that cannot be read (no ``nvidia-smi``, no torch in the engine's interpreter, a command that fails or times
out) is left ``None``. All commands run through a ``run(cmd) -> stdout | None`` callable; the parsers are pure.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench import __version__
from bench.record.model import Benchbook, Environment
from bench.redact import redact_text, redact_value

from ._allowlist import ALLOWED_NAMES, ALLOWED_PREFIXES, SLURM_NAMES, allowed_variables
from ._engine_probe import ENGINE_DISTRIBUTIONS, ENGINE_PROBE, parse_engine_probe
from ._host import host_facts
from ._nvidia_smi import (
    NVIDIA_SMI_FIELDS,
    TOPOLOGY_QUERY,
    parse_nvidia_smi,
    parse_smi_cuda_version,
    parse_topology,
    smi_query,
)

__all__ = [
    "ALLOWED_NAMES",
    "ALLOWED_PREFIXES",
    "COMMIT_ENV",
    "DIRTY_ENV",
    "ENGINE_DISTRIBUTIONS",
    "ENGINE_PROBE",
    "NVIDIA_SMI_FIELDS",
    "SLURM_NAMES",
    "Runner",
    "allowed_variables",
    "capture_benchbook",
    "capture_environment",
    "default_run",
    "parse_engine_probe",
    "parse_nvidia_smi",
    "parse_smi_cuda_version",
    "parse_topology",
]

Runner = Callable[[list[str]], str | None]
"""Runs a command and returns its stdout, or ``None`` when the command is missing or fails."""


def default_run(cmd: list[str], timeout: float = 60.0) -> str | None:
    """Run ``cmd`` without a shell; stdout on success, None if it is missing, fails or times out."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def capture_environment(
    environ: Mapping[str, str] | None = None,
    *,
    engine_python: str | None = None,
    run: Runner | None = None,
    host_info: bool = True,
    gpus: bool = True,
) -> Environment:
    """Capture GPU, CUDA/NCCL, engine versions, allow-listed variables and host info.

    ``environ`` defaults to ``os.environ``; ``run`` to :func:`default_run`. ``engine_python`` is the
    interpreter the engine is launched with (e.g. ``python3`` for SGLang); without it, engine, FlashInfer and
    PyTorch versions, CUDA runtime and NCCL version are left unknown rather than read from an interpreter
    the engine may not use. ``gpus=False`` (a server on another host) leaves the GPU facts and topology unknown:
    this host's GPUs are not the server's. ``features`` is left empty: the orchestration merges the server's switches.
    """
    env = os.environ if environ is None else environ
    runner = run or default_run
    smi = runner(smi_query()) if gpus else None
    gpu = parse_nvidia_smi(smi)
    probe = runner([engine_python, "-c", ENGINE_PROBE]) if engine_python else None
    versions, cuda, nccl, engine_py = parse_engine_probe(probe)
    info: dict[str, Any] = host_facts() if host_info else {}
    topology = parse_topology(runner(TOPOLOGY_QUERY)) if smi is not None else None
    if smi is not None:
        driver_cuda = parse_smi_cuda_version(runner(["nvidia-smi"]))
        if driver_cuda is not None:
            info["driver_cuda_version"] = driver_cuda
    if engine_py is not None:
        info["engine_python"] = engine_py
    gpu = gpu.model_copy(update={"devices": [redact_value("devices", d) for d in gpu.devices]})
    return Environment(
        gpu=gpu,
        topology=redact_text(topology) if topology is not None else None,
        cuda_runtime=cuda,
        nccl_version=nccl,
        env_vars=allowed_variables(env),
        versions=versions,
        info=info,
    )


COMMIT_ENV = "BENCHBOOK_COMMIT"
DIRTY_ENV = "BENCHBOOK_DIRTY"


def _shipped_commit(environ: Mapping[str, str]) -> Benchbook | None:
    """A working tree copied without its ``.git`` (e.g. to a GPU machine) carries the commit it was packed
    from in ``BENCHBOOK_COMMIT`` (40 hex digits) and ``BENCHBOOK_DIRTY`` (true/false)."""
    commit = environ.get(COMMIT_ENV, "").strip().lower()
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    dirty = {"true": True, "false": False}.get(environ.get(DIRTY_ENV, "").strip().lower())
    return Benchbook(version=__version__, commit=commit, dirty=dirty)


def capture_benchbook(repo: Path | None = None, *, untracked_ignored: tuple[str, ...] = ("records/",)) -> Benchbook:
    """benchbook's version, and the commit and dirty flag of ``repo`` (default: this checkout's root).

    Dirty: a tracked file differs from the commit, or an untracked (not git-ignored) file exists outside
    ``untracked_ignored`` (new records written by earlier runs do not make the code dirty).
    Outside a git repository, or without a ``git`` executable, commit and dirty are None.
    """
    root = Path(repo) if repo is not None else Path(__file__).resolve().parents[3]
    shipped = _shipped_commit(os.environ) if repo is None else None
    if shipped is not None:
        return shipped
    try:
        from bench.git import checkout_state  # gitpython raises ImportError when no git executable is found
    except ImportError:
        return Benchbook(version=__version__)
    state = checkout_state(root, untracked_ignored=untracked_ignored)
    return Benchbook(version=__version__, commit=state.commit, dirty=state.dirty)
