"""What ``nvidia-smi`` says about the GPUs (pure parsers over its text)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from bench.record.model import Gpu

__all__ = [
    "NVIDIA_SMI_FIELDS",
    "TOPOLOGY_QUERY",
    "parse_nvidia_smi",
    "parse_smi_cuda_version",
    "parse_topology",
    "smi_query",
]

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
    "index",
    "pci.bus_id",
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

    Facts that differ between GPUs are left None at the top level; ``devices`` keeps every GPU's own row (index,
    PCI bus id, model, memory, power limit, clocks), so a node whose GPUs differ says how.
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
        devices=[_device(r) for r in rows],
        model=model,
        architecture=arch,
        count=len(rows),
        driver=_same(col("driver_version")),
        memory_mib=int(mem) if mem is not None else None,
        power_limit_w=power,
        clocks=clocks,
    )


def _device(row: dict[str, str | None]) -> dict[str, Any]:
    """One GPU's own facts, as ``nvidia-smi`` gave them (unknown ones left out)."""
    index = _num(row.get("index"))
    memory = _num(row.get("memory.total"))
    clocks = {
        key: int(v) if v.is_integer() else v for f, key in _CLOCK_KEYS.items() if (v := _num(row.get(f))) is not None
    }
    device: dict[str, Any] = {
        "index": int(index) if index is not None else None,
        "pci_bus_id": row.get("pci.bus_id"),
        "model": row.get("name"),
        "memory_mib": int(memory) if memory is not None else None,
        "power_limit_w": _num(row.get("power.limit")),
        "compute_capability": row.get("compute_cap"),
        "clocks": clocks,
    }
    return {k: v for k, v in device.items() if v not in (None, {})}


TOPOLOGY_QUERY: list[str] = ["nvidia-smi", "topo", "-m"]
"""The command whose output :func:`parse_topology` reads (the GPU-to-GPU matrix and its legend)."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def parse_topology(text: str | None, limit: int = 8000) -> str | None:
    """``nvidia-smi topo -m`` as plain text: colour codes and trailing blanks removed, at most ``limit`` characters
    (a larger node's matrix is cut at a line, said at the end); None when there is no matrix (no ``GPU0`` column)."""
    if not text or "GPU0" not in text:
        return None
    lines = [_ANSI.sub("", line).rstrip() for line in text.strip("\n").splitlines()]
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit - 40:
            out.append(f"[cut: {len(lines) - len(out)} more lines]")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


_SMI_CUDA = re.compile(r"CUDA Version\s*:\s*([0-9]+(?:\.[0-9]+)*)")


def parse_smi_cuda_version(text: str | None) -> str | None:
    """The CUDA version the driver supports, from plain ``nvidia-smi`` output (information only)."""
    m = _SMI_CUDA.search(text or "")
    return m.group(1) if m else None


def smi_query(fields: tuple[str, ...] = NVIDIA_SMI_FIELDS) -> list[str]:
    """The ``nvidia-smi`` command whose output :func:`parse_nvidia_smi` reads."""
    return ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
