"""Facts about the host (CPU, memory, OS, kernel, Python, hostname): ``info`` only, never a comparability split."""

from __future__ import annotations

import os
import platform
import re
import socket
from pathlib import Path
from typing import Any

__all__ = ["host_facts"]


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


def host_facts() -> dict[str, Any]:
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
