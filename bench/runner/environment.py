"""Capturing the environment a benchmark ran in: allow-listed, secret-free, never guessed.

What defines comparability (GPU model and count, driver, CUDA runtime, NCCL version, every ``NCCL_*``
variable, engine / FlashInfer / PyTorch versions) goes into the record's context fields; host facts
(CPU, memory, OS, kernel, Python, hostname) go into ``info``, which never splits a comparison.

Rules
-----
* Only variables named in :data:`ALLOWED_NAMES` or starting with one of :data:`ALLOWED_PREFIXES` are
  ever read from the environment. Within those, :func:`bench.redact.redact_value` replaces anything
  that looks like a secret by ``<redacted>``.
* A fact that cannot be read (no ``nvidia-smi``, no torch in the engine's interpreter, a command that
  fails or times out) is left ``None``; nothing is inferred from names or defaults.
* All I/O goes through a ``run(cmd) -> stdout | None`` callable and small readers at the edge; the
  parsers are pure functions over text.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import subprocess
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench import __version__
from bench.record.model import Benchbook, Environment, Gpu
from bench.redact import redact_value

__all__ = [
    "ALLOWED_NAMES",
    "ALLOWED_PREFIXES",
    "ENGINE_PROBE",
    "NVIDIA_SMI_FIELDS",
    "Runner",
    "allowed_variables",
    "capture_benchbook",
    "capture_environment",
    "default_run",
    "parse_engine_probe",
    "parse_nvidia_smi",
    "parse_smi_cuda_version",
]

Runner = Callable[[list[str]], str | None]
"""Runs a command and returns its stdout, or ``None`` when the command is missing or fails."""

ALLOWED_PREFIXES: tuple[str, ...] = ("NCCL_", "SGLANG_", "SGL_", "FLASHINFER_", "CUDA_", "TORCH_NCCL_")
"""Every variable with one of these prefixes is recorded (values still pass through redaction)."""

ALLOWED_NAMES: frozenset[str] = frozenset(
    {
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "PYTORCH_CUDA_ALLOC_CONF",
        "PYTORCH_ALLOC_CONF",
        "TORCH_CUDA_ARCH_LIST",
        "NVIDIA_TF32_OVERRIDE",
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
        "CUBLAS_WORKSPACE_CONFIG",
        "NVIDIA_VISIBLE_DEVICES",
        "TOKENIZERS_PARALLELISM",
    }
)
"""Other performance-relevant variables recorded by exact name."""

SLURM_NAMES: frozenset[str] = frozenset(
    {
        "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION",
        "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_CPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
        "SLURM_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK", "SLURM_VERSION",
    }
)  # fmt: skip
"""A Slurm task's facts (job, array task, nodes, partition, GPUs; SLURM_VERSION is set by ``bench submit``'s
script). Named one by one: a job's other SLURM_* variables hold the user, uid, submit folder and controller."""
ALLOWED_NAMES = ALLOWED_NAMES | SLURM_NAMES

# ----------------------------------------------------------------------------------------------------------------------
# Allow-list (pure); the values pass through the one redaction module, bench.redact


def _allowed(name: str) -> bool:
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def allowed_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of ``environ``, redacted (:func:`bench.redact.redact_value`: a secret name hides
    the whole value, a secret inside a value is hidden in place), sorted by name. Nothing else is read."""
    return {name: redact_value(name, environ[name]) for name in sorted(environ) if _allowed(name)}


# ----------------------------------------------------------------------------------------------------------------------
# nvidia-smi (pure parsers)

NVIDIA_SMI_FIELDS: tuple[str, ...] = (
    "name",
    "driver_version",
    "memory.total",
    "power.limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "clocks.applications.graphics",
    "clocks.applications.memory",
    "compute_cap",
)

_CLOCK_KEYS = {
    "clocks.max.sm": "max_sm_mhz",
    "clocks.max.memory": "max_memory_mhz",
    "clocks.applications.graphics": "applications_graphics_mhz",
    "clocks.applications.memory": "applications_memory_mhz",
}

# compute capability (major) -> architecture, per NVIDIA's CUDA GPU list
_ARCH_BY_MAJOR = {"9": "Hopper", "10": "Blackwell", "11": "Blackwell", "12": "Blackwell"}
_ARCH_BY_CC = {"7.0": "Volta", "7.2": "Volta", "7.5": "Turing", "8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere",
               "8.9": "Ada Lovelace"}  # fmt: skip


def _na(v: str) -> str | None:
    v = v.strip()
    if not v or v.startswith("[") or v.upper() in ("N/A", "NOT SUPPORTED"):
        return None
    return v


def _num(v: str | None) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _same(values: list[Any]) -> Any:
    """The common value of every GPU, or None when they differ."""
    return values[0] if values and all(v == values[0] for v in values) else None


def parse_nvidia_smi(text: str | None, fields: tuple[str, ...] = NVIDIA_SMI_FIELDS) -> Gpu:
    """Parse ``nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits`` output (one line per GPU).

    Facts that differ between GPUs are left None at the top level; the per-GPU rows are not kept here.
    """
    if not text or not text.strip():
        return Gpu()
    rows: list[dict[str, str | None]] = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            return Gpu()  # not the output we asked for: record nothing rather than misread it
        rows.append({f: _na(c) for f, c in zip(fields, cells, strict=True)})

    def col(field: str) -> list[str | None]:
        return [r.get(field) for r in rows]

    names = col("name")
    model = _same(names)
    if model is None and any(names):
        model = " + ".join(f"{n}×{c}" for n, c in Counter(str(n) for n in names).items())
    cc = _same(col("compute_cap"))
    arch = None
    if cc is not None:
        arch = _ARCH_BY_CC.get(cc) or _ARCH_BY_MAJOR.get(cc.split(".")[0])
    mem = _num(_same(col("memory.total")))
    power = _num(_same(col("power.limit")))
    clocks: dict[str, Any] = {}
    for field, key in _CLOCK_KEYS.items():
        value = _num(_same(col(field)))
        if value is not None:
            clocks[key] = int(value) if value.is_integer() else value
    if cc is not None:
        clocks["compute_capability"] = cc
    return Gpu(
        model=model,
        architecture=arch,
        count=len(rows),
        driver=_same(col("driver_version")),
        memory_mib=int(mem) if mem is not None else None,
        power_limit_w=power,
        clocks=clocks,
    )


_SMI_CUDA = re.compile(r"CUDA Version\s*:\s*([0-9]+(?:\.[0-9]+)*)")


def parse_smi_cuda_version(text: str | None) -> str | None:
    """The CUDA version the driver supports, from plain ``nvidia-smi`` output (information only)."""
    m = _SMI_CUDA.search(text or "")
    return m.group(1) if m else None


# ----------------------------------------------------------------------------------------------------------------------
# The engine's interpreter (a short subprocess; parsed here)

ENGINE_DISTRIBUTIONS: tuple[str, ...] = (
    "sglang",
    "sgl-kernel",
    "sglang-kernel",  # the kernel's distribution name from sglang 0.5.x (sglang 0.5.17 pins sglang-kernel 0.4.5)
    "sgl-deep-gemm",
    "vllm",
    "flashinfer-python",
    "flashinfer",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "torch",
    "triton",
    "transformers",
    "tokenizers",
    "xgrammar",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
)

ENGINE_PROBE = """
import json, sys
from importlib import metadata
out = {"python": sys.version.split()[0], "versions": {}}
for dist in DISTS:
    try:
        out["versions"][dist] = metadata.version(dist)
    except Exception:
        pass
if "torch" in out["versions"]:
    try:
        import torch
        out["torch_cuda"] = torch.version.cuda
        try:
            v = torch.cuda.nccl.version()
            out["torch_nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else v
        except Exception:
            pass
    except Exception:
        pass
print(json.dumps(out))
""".replace("DISTS", repr(ENGINE_DISTRIBUTIONS))
"""Run with the engine's interpreter; prints one JSON object. Reads versions, never starts CUDA work."""

_VERSION_TEXT = re.compile(r"^[0-9A-Za-z.+\-_]{1,64}$")


def _nccl_from_int(v: int) -> str | None:
    """torch < 1.13 returned NCCL's version as an int: major*1000+minor*100+patch (or *10000 from 2.9)."""
    if v >= 10000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    if v >= 1000:
        return f"{v // 1000}.{v // 100 % 10}.{v % 100}"
    return None


def parse_engine_probe(text: str | None) -> tuple[dict[str, str], str | None, str | None, str | None]:
    """``(versions, cuda_runtime, nccl_version, python_version)`` from the probe's JSON; unknowns are None."""
    if not text:
        return {}, None, None, None
    try:
        data = json.loads(text.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {}, None, None, None
    if not isinstance(data, dict):
        return {}, None, None, None

    def clean(v: Any) -> str | None:
        return v if isinstance(v, str) and _VERSION_TEXT.match(v) else None

    raw_versions = data.get("versions")
    versions: dict[str, str] = {}
    if isinstance(raw_versions, dict):
        for name in ENGINE_DISTRIBUTIONS:
            v = clean(raw_versions.get(name))
            if v is not None:
                versions[name] = v
    cuda = clean(data.get("torch_cuda"))
    nccl_raw = data.get("torch_nccl")
    nccl = _nccl_from_int(nccl_raw) if isinstance(nccl_raw, int) else clean(nccl_raw)
    if nccl is None:  # no torch (or no NCCL in it): the NCCL wheel's own version
        nccl = versions.get("nvidia-nccl-cu13") or versions.get("nvidia-nccl-cu12")
    return versions, cuda, nccl, clean(data.get("python"))


# ----------------------------------------------------------------------------------------------------------------------
# Host facts (edge readers)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _cpu_model(cpuinfo: str | None) -> str | None:
    for line in (cpuinfo or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware") and value.strip():
            return value.strip()
    return platform.processor() or None


def _mem_gib(meminfo: str | None) -> float | None:
    m = re.search(r"^MemTotal:\s+([0-9]+)\s*kB", meminfo or "", re.MULTILINE)
    return round(int(m.group(1)) / 1024**2, 1) if m else None


def _os_name(os_release: str | None) -> str:
    m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', os_release or "", re.MULTILINE)
    return m.group(1) if m else platform.platform(terse=True)


def _host_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu_model": _cpu_model(_read("/proc/cpuinfo")),
        "cpu_count": os.cpu_count(),
        "memory_gib": _mem_gib(_read("/proc/meminfo")),
        "os": _os_name(_read("/etc/os-release")),
        "kernel": platform.release() or None,
        "python": platform.python_version(),
        "hostname": socket.gethostname() or None,
    }
    return {k: v for k, v in info.items() if v is not None}


# ----------------------------------------------------------------------------------------------------------------------
# Public entry points


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
) -> Environment:
    """Capture GPU, CUDA/NCCL, engine versions, allow-listed variables and host info.

    ``environ`` defaults to ``os.environ``; ``run`` to :func:`default_run`. ``engine_python`` is the
    interpreter the engine is launched with (e.g. ``python3`` for SGLang); without it, engine, FlashInfer and
    PyTorch versions, CUDA runtime and NCCL version are left unknown rather than read from an interpreter
    the engine may not use. ``features`` is left empty: the orchestration merges the server's switches.
    """
    env = os.environ if environ is None else environ
    runner = run or default_run
    smi = runner(["nvidia-smi", f"--query-gpu={','.join(NVIDIA_SMI_FIELDS)}", "--format=csv,noheader,nounits"])
    gpu = parse_nvidia_smi(smi)
    probe = runner([engine_python, "-c", ENGINE_PROBE]) if engine_python else None
    versions, cuda, nccl, engine_py = parse_engine_probe(probe)
    info: dict[str, Any] = _host_info() if host_info else {}
    if smi is not None:
        driver_cuda = parse_smi_cuda_version(runner(["nvidia-smi"]))
        if driver_cuda is not None:
            info["driver_cuda_version"] = driver_cuda
    if engine_py is not None:
        info["engine_python"] = engine_py
    return Environment(
        gpu=gpu,
        cuda_runtime=cuda,
        nccl_version=nccl,
        env_vars=allowed_variables(env),
        versions=versions,
        info=info,
    )


def _untracked_outside(untracked: list[str], ignored_prefixes: tuple[str, ...]) -> bool:
    return any(not path.startswith(ignored_prefixes) for path in untracked)


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
    root = Path(repo) if repo is not None else Path(__file__).resolve().parents[2]
    shipped = _shipped_commit(os.environ) if repo is None else None
    if shipped is not None:
        return shipped
    try:
        import git  # imported here: gitpython raises ImportError when no git executable is found
    except ImportError:
        return Benchbook(version=__version__)
    try:
        r = git.Repo(root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError):
        return Benchbook(version=__version__)
    try:
        try:
            commit: str | None = r.head.commit.hexsha
        except ValueError:  # a repository without commits
            commit = None
        dirty = r.is_dirty(untracked_files=False) or _untracked_outside(r.untracked_files, untracked_ignored)
        return Benchbook(version=__version__, commit=commit, dirty=bool(dirty))
    except git.GitCommandError:
        return Benchbook(version=__version__)
    finally:
        r.close()
