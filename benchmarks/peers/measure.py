"""One client against one fresh server: the measuring half of ``benchmarks/clients.py``.

A run starts the server (``benchmarks/peers/server.py``, a stream log with send times), starts the client as a
subprocess, samples the CPU time of the client's whole process tree and of the server every ``SAMPLE_S``, waits
for the client, stops the server (which writes its log) and returns a :class:`Run`:

* the server's count: tokens it sent, over its busy window (first request read -> last chunk written);
* CPU seconds of the client's tree in that window (interpolated between samples), and over its whole life
  (``os.wait4``: the process and every descendant it reaped, start-up included);
* the server's own CPU share in that window (near 100 % of a core: the server was the limit, not the client);
* for a client that writes per-request receipt times (benchbook), the lag between the server's send time and
  the client's receipt time of every token (both ``perf_counter_ns``: CLOCK_MONOTONIC, one clock per machine).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_S = 0.1
_TICK = os.sysconf("SC_CLK_TCK")

__all__ = ["Run", "percentile", "run_client", "tree_cpu_s"]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu_s(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants, plus every descendant they have reaped (cutime/cstime):
    each process's time counted once."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        fields = _stat(pid)
        if fields is None:
            continue
        total += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        todo += children.get(pid, [])
    return total / _TICK


def _proc_cpu_s(pid: int, reaped: bool = False) -> float | None:
    """utime + stime of one process (with ``reaped``: and of the children it has waited for)."""
    fields = _stat(pid)
    return None if fields is None else sum(int(v) for v in fields[11 : 15 if reaped else 13]) / _TICK


@dataclass
class Run:
    client: str
    concurrency: int
    round: int
    ok: bool
    returncode: int
    result: dict[str, Any]  # what the client itself reported (parsed by its adapter)
    server_tokens: int = 0
    server_requests: int = 0
    server_window_s: float = 0.0
    server_tok_s: float = 0.0
    cpu_s_window: float | None = None
    cpu_s_total: float = 0.0
    server_cpu_percent: float | None = None
    lag_ms: dict[str, float] | None = None
    wall_s: float = 0.0
    note: str = ""
    samples: list[tuple[int, float, float | None]] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, Any]:
        tokens = self.server_tokens or None
        return {
            "client": self.client,
            "concurrency": self.concurrency,
            "round": self.round,
            "ok": self.ok,
            "returncode": self.returncode,
            "requests": self.result.get("requests"),
            "failed": self.result.get("failed"),
            "errors": self.result.get("errors", []),
            "tool_tok_s": self.result.get("tool_tok_s"),
            "server_tok_s": round(self.server_tok_s, 1),
            "server_tokens": self.server_tokens,
            "server_requests": self.server_requests,
            "server_window_s": round(self.server_window_s, 4),
            "cpu_s_window": None if self.cpu_s_window is None else round(self.cpu_s_window, 3),
            "cpu_s_total": round(self.cpu_s_total, 3),
            "cpu_s_per_1k_tokens": None
            if self.cpu_s_window is None or not tokens
            else round(1000 * self.cpu_s_window / tokens, 5),
            "cpu_s_per_1k_tokens_total": None if not tokens else round(1000 * self.cpu_s_total / tokens, 5),
            "server_cpu_percent": None if self.server_cpu_percent is None else round(self.server_cpu_percent, 1),
            "lag_ms": self.lag_ms,
            "wall_s": round(self.wall_s, 2),
            "note": self.note,
        }


def _at(samples: list[tuple[int, float, float | None]], t_ns: int, index: int) -> float | None:
    """Linear interpolation of sample column ``index`` at ``t_ns``."""
    for (t0, *a), (t1, *b) in itertools.pairwise(samples):
        if t0 <= t_ns <= t1:
            va, vb = a[index - 1], b[index - 1]
            if va is None or vb is None:
                return None
            return va + (vb - va) * (t_ns - t0) / max(1, t1 - t0)
    return None


def _lag(stamps_path: Path, streams: list[dict[str, Any]], skip: int) -> dict[str, float] | None:
    """Receipt minus send time of every token of the measured requests (named r<skip>...)."""
    try:
        stamps: dict[str, list[int]] = json.loads(stamps_path.read_text())
    except (OSError, ValueError):
        return None
    sent = {s["name"]: s["emit_ns"] for s in streams}
    lags: list[float] = []
    for name, received in stamps.items():
        if int(name[1:]) < skip or name not in sent:
            continue
        # one receipt time per token-bearing chunk: the test server sends one token per chunk
        lags += [(r - e) / 1e6 for r, e in zip(received, sent[name], strict=False)]
    if not lags:
        return None
    return {"p50": round(percentile(lags, 50), 3), "p99": round(percentile(lags, 99), 3), "n": len(lags)}


def run_client(
    name: str,
    command: Callable[[str, Path], list[str]],
    parse: Callable[[Path], dict[str, Any]],
    *,
    concurrency: int,
    round_no: int,
    work: Path,
    output_tokens: int,
    warmup: int,
    timeout_s: float,
    server_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    tree: bool = True,
    server_tree: bool = False,
    stamps: bool = False,
) -> Run:
    """Start a server, run ``command(url, workdir)``, and measure both; see the module docstring. ``tree``: the
    client starts processes of its own (sampling then scans /proc for its descendants); ``server_tree``: so does
    the server (several server processes); ``stamps``: the client writes ``timestamps.json`` (the lag)."""
    work.mkdir(parents=True, exist_ok=True)
    dump = work / "server-streams.json"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks/peers/server.py"), "--dump", str(dump),
         "--output-tokens", str(output_tokens), *(server_args or [])],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    run = Run(name, concurrency, round_no, ok=False, returncode=-1, result={})
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        log = (work / "client.log").open("w")
        started = time.monotonic()
        proc = subprocess.Popen(command(url, work), cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env)
        stop = threading.Event()

        def server_cpu() -> float | None:
            return tree_cpu_s(server.pid) if server_tree else _proc_cpu_s(server.pid)

        def sample() -> None:
            while not stop.is_set():
                cpu = tree_cpu_s(proc.pid) if tree else _proc_cpu_s(proc.pid, reaped=True)
                if cpu is not None:
                    run.samples.append((time.perf_counter_ns(), cpu, server_cpu()))
                stop.wait(SAMPLE_S)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = time.monotonic() + timeout_s
        status, usage = 0, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                run.note = f"killed after {timeout_s:.0f} s"
                break
            time.sleep(0.05)
        stop.set()
        sampler.join()
        run.cpu_s_total = usage.ru_utime + usage.ru_stime if usage is not None else 0.0
        run.samples.append((time.perf_counter_ns(), run.cpu_s_total, server_cpu()))
        log.close()
        run.wall_s = time.monotonic() - started
        run.returncode = os.waitstatus_to_exitcode(status)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    streams: list[dict[str, Any]] = json.loads(dump.read_text())["streams"]
    try:
        run.result = parse(work)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        run.result = {"failed": None, "errors": [f"could not read the client's result: {exc}"]}
    _server_side(run, streams)
    if stamps:
        run.lag_ms = _lag(work / "timestamps.json", streams, warmup)
    run.ok = run.returncode == 0 and run.result.get("failed") == 0 and run.server_tokens > 0
    return run


def _server_side(run: Run, streams: list[dict[str, Any]]) -> None:
    done = [s for s in streams if s["emit_ns"]]
    if not done:
        return
    first = min(s["t0_ns"] for s in streams)
    last = max(s["emit_ns"][-1] for s in done)
    run.server_tokens = sum(len(s["emit_ns"]) for s in done)
    run.server_requests = len(streams)
    run.server_window_s = (last - first) / 1e9
    run.server_tok_s = run.server_tokens / run.server_window_s if run.server_window_s > 0 else 0.0
    c0, c1 = _at(run.samples, first, 1), _at(run.samples, last, 1)
    if c0 is not None and c1 is not None:
        run.cpu_s_window = c1 - c0
    s0, s1 = _at(run.samples, first, 2), _at(run.samples, last, 2)
    if s0 is not None and s1 is not None and run.server_window_s > 0:
        run.server_cpu_percent = 100 * (s1 - s0) / run.server_window_s
