"""The site benchmark's CPU figure (benchmarks/site_build.py): the build's own CPU time and that of the processes it
forks, not the parent's alone."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from site_build import SAMPLE_EVERY, SAMPLER_SHARE, run_measured, sample_wait  # noqa: E402

# the parent forks two children that each spin for about 0.4 s of CPU, waits for them, and does nothing itself
SCRIPT = """
import os, time
def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
pids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        spin(0.4)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print("done", flush=True)
"""


def test_cpu_counts_the_forked_children() -> None:
    t0 = time.process_time()
    run = run_measured([sys.executable, "-c", SCRIPT], ROOT, {})
    assert run.returncode == 0 and "done" in run.output
    assert 0.75 <= run.cpu_s < 3.0, run.cpu_s  # both children's 0.4 s (and the interpreter's start-up)
    assert time.process_time() - t0 < 0.5  # not the measuring process's own time


def test_a_process_that_sleeps_uses_little_cpu() -> None:
    run = run_measured([sys.executable, "-c", "import time; time.sleep(0.6)"], ROOT, {})
    assert run.returncode == 0
    assert run.seconds >= 0.6 and run.cpu_s < 0.4  # wall time is not CPU time


def test_the_memory_sampler_waits_longer_after_a_costly_sample() -> None:
    assert sample_wait(0.0) == SAMPLE_EVERY == sample_wait(0.001)  # a cheap sample: every 50 ms
    for cost in (0.005, 0.02, 0.1):
        wait = sample_wait(cost)
        assert wait > SAMPLE_EVERY
        assert abs(cost / (cost + wait) - SAMPLER_SHARE) < 1e-9  # its share of a core, at most the bound
