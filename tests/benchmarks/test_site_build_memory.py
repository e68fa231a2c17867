"""The site benchmark's memory figure (benchmarks/site_build.py): a build that forks converters is counted once for
the pages its processes share, not once per process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from site_build import _tree_rss  # noqa: E402

MIB = 2**20
# 200 MiB written by the parent, then shared with a forked child that only reads it; each prints when ready
SCRIPT = """
import os, sys, time
block = bytearray(200 * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
pid = os.fork()
if pid == 0:
    total = sum(block[::4096])
    print("child", total, flush=True)
    time.sleep(30)
    os._exit(0)
print("parent", flush=True)
time.sleep(30)
"""


def test_a_forked_tree_counts_shared_pages_once() -> None:
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        seen = {proc.stdout.readline().split()[0], proc.stdout.readline().split()[0]}
        assert seen == {"parent", "child"}
        time.sleep(0.2)
        rss = _tree_rss(proc.pid)
        assert 200 * MIB < rss < 300 * MIB, rss / MIB  # not 400 MiB: the child's pages are the parent's
    finally:
        proc.kill()
        proc.wait()


def test_one_process_is_its_resident_set() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "b = bytearray(100 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
         "print('ready', flush=True)\nimport time; time.sleep(30)"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert 100 * MIB < _tree_rss(proc.pid) < 160 * MIB
    finally:
        proc.kill()
        proc.wait()
