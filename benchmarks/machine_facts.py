"""What every benchmark result file says about where and on what it ran: the machine, its usable cores, the commit.

One definition for ``clients.py``, ``client_scaling.py`` and ``site_build.py`` (the result formats in
``benchmarks/README.md``). Needs nothing beyond the standard library (it runs on the H200 image as it is).
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["commit", "machine", "usable_cores"]

ROOT = Path(__file__).resolve().parent.parent


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, capped by a cgroup v2 CPU quota (a container may see
    every core of its host in ``os.cpu_count()``)."""
    cores = len(os.sched_getaffinity(0))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cores


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return None


def machine() -> dict[str, Any]:
    """The CPU model, usable cores, the host's CPU count, memory, Python and the system."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        cpuinfo = []
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), None)
    return {
        "cpu": cpu or platform.processor(),
        "cores": usable_cores(),
        "cpu_count": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        "system": platform.platform(),
    }


def commit(given: str | None = None) -> dict[str, Any]:
    """The commit measured (12 hex digits): ``given``, else git's HEAD, and whether tracked files differed from it
    (None where the tree is no git checkout, e.g. a copy, or the commit was given)."""

    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""

    head = (given or git("rev-parse", "HEAD"))[:12] or None
    dirty = bool(git("status", "--porcelain", "--untracked-files=no")) if given is None and head else None
    return {"commit": head, "dirty": dirty}
