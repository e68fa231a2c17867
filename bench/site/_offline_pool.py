"""The offline check over many files in several processes.

At the end of a build the building process holds most of the build's memory (about 2 GB at 10,000 records), so the
workers are not forked from it: each is a fresh interpreter that loads only ``_offline_scan.py`` (stdlib only, by
its path, not the ``bench`` package), is handed a list of file paths, and hands back each file's digest and
external loads as JSON. The files are dealt out in turn; the first share is checked here while the workers run. A
worker that fails, is killed or answers nonsense costs time, never a result: its share is checked here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._offline_scan import Violation, check_file

__all__ = ["MIN_FILES_PER_WORKER", "check_files"]

MIN_FILES_PER_WORKER = 100  # fewer files than this per process: starting one costs more than it saves

_SCAN = Path(__file__).with_name("_offline_scan.py")
_BOOT = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('_offline_scan', sys.argv[1])\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "sys.modules['_offline_scan'] = mod\n"
    "spec.loader.exec_module(mod)\n"
    "mod.worker_main()\n"
)

Result = tuple[str, list[Violation]]


def check_files(
    files: Sequence[tuple[str, str]], clean: frozenset[str], allow: Sequence[str], workers: int
) -> list[Result]:
    """``check_file`` over ``files`` (path, name in the site), in order, over up to ``workers`` processes."""
    workers = max(1, min(workers, len(files) // MIN_FILES_PER_WORKER))
    if workers == 1 or not _SCAN.is_file():
        return [check_file(path, rel, clean, allow) for path, rel in files]
    shares = [files[k::workers] for k in range(workers)]
    procs = [_start(share, clean, allow) for share in shares[1:]]
    done = [[check_file(path, rel, clean, allow) for path, rel in shares[0]]]
    for proc, share in zip(procs, shares[1:], strict=True):
        answer = _answer(proc, share)
        done.append(answer if answer is not None else [check_file(path, rel, clean, allow) for path, rel in share])
    out: list[Result] = [("", [])] * len(files)
    for k, results in enumerate(done):
        out[k::workers] = results
    return out


def _start(share: Sequence[tuple[str, str]], clean: frozenset[str], allow: Sequence[str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", _BOOT, str(_SCAN)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    job = {"allow": list(allow), "clean": sorted(clean), "files": [list(f) for f in share]}
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(job).encode())  # the worker reads all of it before it starts
        proc.stdin.close()
    except OSError:  # it died before reading: its share is checked here
        pass
    return proc


def _answer(proc: subprocess.Popen[bytes], share: Sequence[tuple[str, str]]) -> list[Result] | None:
    """The worker's results for ``share``, or None when it failed or answered something else."""
    assert proc.stdout is not None
    out = proc.stdout.read()
    if proc.wait() != 0:
        return None
    try:
        raw: Any = json.loads(out)
        results = [
            (digest, [Violation(rel, where, url) for where, url in found])
            for (digest, found), (_, rel) in zip(raw, share, strict=True)
        ]
    except (ValueError, TypeError):
        return None
    if not all(
        isinstance(d, str) and isinstance(v.where, str) and isinstance(v.url, str) for d, f in results for v in f
    ):
        return None
    return results
