"""The environment a record was measured in, as table rows (pure): GPU, driver, CUDA, NCCL, variables, versions,
feature switches and host facts; one record's, or several side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench.md_table import md_table
from bench.record.model import Environment, Record

from ._escape import md_code, md_code_block, md_text
from ._format import NOT_STATED
from ._markup import fact
from ._paths import record_link

__all__ = ["device_text", "environment_rows", "environment_table", "gpu_text", "topology_block"]

FEATURE_LABELS = {
    "nccl_tuned": "NCCL tuned",
    "flashinfer_allreduce_fusion": "FlashInfer allreduce fusion",
    "sglang_sm120_patch": "SGLang patched for SM120",
    "cuda_graph": "CUDA graphs",
}


def gpu_text(env: Environment) -> str:
    g = env.gpu
    name = g.model or (f"{g.architecture} (model not stated)" if g.architecture else NOT_STATED)
    return f"{g.count}× {name}" if g.count else name


def device_text(device: dict[str, object]) -> str:
    """One GPU's own facts in a line: model, memory, power limit, clocks, PCI bus id (what ``nvidia-smi`` said)."""
    parts = [str(device.get("model") or NOT_STATED)]
    if device.get("memory_mib") is not None:
        parts.append(f"{device['memory_mib']} MiB")
    if isinstance(device.get("power_limit_w"), int | float):
        parts.append(f"{float(device['power_limit_w']):g} W")  # type: ignore[arg-type]
    clocks = device.get("clocks")
    if isinstance(clocks, dict) and clocks.get("max_sm_mhz") is not None:
        parts.append(f"SM max {clocks['max_sm_mhz']} MHz")
    if isinstance(clocks, dict) and clocks.get("applications_graphics_mhz") is not None:
        parts.append(f"applications {clocks['applications_graphics_mhz']} MHz")
    if device.get("pci_bus_id"):
        parts.append(f"bus {device['pci_bus_id']}")
    return " · ".join(parts)


def topology_block(env: Environment) -> str:
    """The GPU-to-GPU topology (``nvidia-smi topo -m``) as a code block, or "" when the record has none."""
    if not env.topology:
        return ""
    return "GPU topology (`nvidia-smi topo -m`):\n\n" + md_code_block(env.topology) + "\n"


def environment_rows(env: Environment, *, claimed: Callable[[str], str] | None = None) -> list[tuple[str, str]]:
    """Label and value of each environment fact; ``claimed(dotted field)`` returns a mark for a claimed value."""
    mark = claimed or (lambda _field: "")
    g = env.gpu
    rows: list[tuple[str, str]] = [
        ("GPU", md_text(gpu_text(env))),
        ("GPU architecture", fact(g.architecture)),
        ("GPU driver", fact(g.driver)),
        ("GPU memory (MiB)", fact(g.memory_mib)),
        ("GPU power limit (W)", fact(g.power_limit_w)),
        ("CUDA runtime", fact(env.cuda_runtime)),
        ("NCCL version", fact(env.nccl_version)),
    ]
    rows += [(md_text(f"clock: {k}"), fact(v)) for k, v in sorted(g.clocks.items())]
    rows += [(md_text(f"GPU {d.get('index', i)}"), md_text(device_text(d))) for i, d in enumerate(g.devices)]
    rows += [(md_code(k), fact(v)) for k, v in sorted(env.env_vars.items())]
    if not any(k.startswith("NCCL_") for k in env.env_vars):
        rows.append((md_text("NCCL_* variables"), NOT_STATED))
    rows += [(md_text(f"{k} version"), fact(v)) for k, v in sorted(env.versions.items())]
    rows += [
        (md_text(FEATURE_LABELS.get(k, k.replace("_", " "))), fact(v) + mark(f"environment.features.{k}"))
        for k, v in sorted(env.features.items())
    ]
    rows += [(md_text(f"info: {k}"), fact(v)) for k, v in sorted(env.info.items())]
    return rows


def environment_table(records: Sequence[Record], page: str) -> str:
    """Environment facts side by side, one column per record (``not stated`` where a record is silent)."""
    if not records:
        return "*No records.*"
    per = [dict(environment_rows(r.environment)) for r in records]
    keys: list[str] = []
    for rows in per:
        keys += [k for k in rows if k not in keys]
    header = ["Environment", *(record_link(r, page, text=r.variant) for r in records)]
    body = [[k, *(rows.get(k, NOT_STATED) for rows in per)] for k in keys]
    return md_table(header, body)
