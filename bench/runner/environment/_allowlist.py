"""The environment variables a record may keep: an allow-list, never the whole environment; values redacted.

Only variables named in :data:`ALLOWED_NAMES` or starting with one of :data:`ALLOWED_PREFIXES` are ever read.
Within those, :func:`bench.redact.redact_value` replaces anything that looks like a secret by ``<redacted>``.
"""

from __future__ import annotations

from collections.abc import Mapping

from bench.redact import redact_value

__all__ = ["ALLOWED_NAMES", "ALLOWED_PREFIXES", "SLURM_NAMES", "allowed_variables"]

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


def _allowed(name: str) -> bool:
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def allowed_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of ``environ``, redacted (:func:`bench.redact.redact_value`: a secret name hides
    the whole value, a secret inside a value is hidden in place), sorted by name. Nothing else is read."""
    return {name: redact_value(name, environ[name]) for name in sorted(environ) if _allowed(name)}
