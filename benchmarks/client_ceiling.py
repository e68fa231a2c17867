"""How fast can the harness's own client go? Measure it against the known-timing test server.

The server (``python -m bench.testing.testserver``) runs in a separate process, so it does not share the client's event
loop. For concurrency 1, 2, 4, ... 512 the client runs a fixed-concurrency level and we report:

* token events/s offered (what the server's schedule would deliver if the client kept up) and achieved;
* the client process's CPU use (100 % = one core; the machine has 2);
* the timestamp error: measured TTFT minus the configured TTFT, measured per-token ITL minus the configured ITL
  (p50 / p99), next to the server's own lateness against its deadlines (its share of that error);
* the client process's peak resident memory during the level (``VmHWM``, reset before each level through
  ``/proc/self/clear_refs``; where that is not possible, the process's lifetime peak, marked ``*``).

Each level gets one warm-up round (C requests) first. Then the highest sustained token-event rate (achieved >= 90 %
of offered, no failures) and the timestamp error of a level run at about half of it. Bounded: a level's measured
part stops past ``--level-budget-s`` and no new level starts past ``--budget-s``.

    .venv/bin/python benchmarks/client_ceiling.py            # ~1-2 minutes
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner.client import StreamingClient  # noqa: E402
from bench.runner.load_generator import run_level  # noqa: E402
from bench.runner.metrics import itl_samples_ms  # noqa: E402
from bench.runner.request import RequestSpec  # noqa: E402

__all__ = ["main"]


@dataclass
class Row:
    concurrency: int
    requests: int
    offered: float
    achieved: float
    client_cpu: float
    server_cpu: float | None
    ttft_err: tuple[float, float]
    itl_err: tuple[float, float]
    overhead: tuple[float, float]
    server_late: tuple[float | None, float | None]
    failed: int
    stopped: str | None
    peak_rss_mib: float | None = None
    peak_is_lifetime: bool = False

    @property
    def sustained(self) -> bool:
        return self.failed == 0 and self.stopped is None and self.achieved >= 0.9 * self.offered


def _proc_cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _reset_peak_rss() -> bool:
    """Reset this process's peak RSS (VmHWM) so the next reading is the peak since now (Linux >= 4.0)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_rss_mib() -> float:
    """VmHWM from /proc, else ``ru_maxrss`` (KiB on Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _p50_p99(values: list[float]) -> tuple[float, float]:
    return (float(np.percentile(values, 50)), float(np.percentile(values, 99))) if values else (math.nan, math.nan)


async def measure_level(url: str, server_pid: int, concurrency: int, args: argparse.Namespace) -> Row:
    spec = RequestSpec(prompt="ceiling", max_tokens=args.output_tokens, ignore_eos=True, api="completions")
    n_requests = max(4, args.rounds * concurrency)

    def too_long() -> str | None:
        return (
            f"level budget {args.level_budget_s} s spent" if time.monotonic() - started > args.level_budget_s else None
        )

    async with StreamingClient(url, max_connections=concurrency, timeout_s=60, shard_size=args.shard_size) as client:
        await client.warm_connections(concurrency)
        await run_level(client, [spec] * concurrency, concurrency)  # warm-up: one round, never cut short
        httpx.post(f"{url}/stats/reset")
        reset = _reset_peak_rss()
        started = time.monotonic()
        cpu0, wall0, srv0 = _self_cpu_s(), time.monotonic(), _proc_cpu_s(server_pid)
        run = await run_level(client, [spec] * n_requests, concurrency, should_abort=too_long)
        cpu1, wall1, srv1 = _self_cpu_s(), time.monotonic(), _proc_cpu_s(server_pid)
        peak = _peak_rss_mib()
    stats = httpx.get(f"{url}/stats").json()["lateness_ms"]
    done = [r for r in run.results if r.ok]
    events = sum(len(r.chunk_times_ns) for r in done)
    # over the completed requests only: a level cut short by its budget cancels the ones in flight
    window_s = (max((r.t_done_ns or 0 for r in done), default=0) - run.window_start_ns) / 1e9
    duration_ms = args.ttft_ms + (args.output_tokens - 1) * args.itl_ms
    ttft_err = [(r.t_first_ns - r.t_sent_ns) / 1e6 - args.ttft_ms for r in done if r.t_first_ns is not None]
    itl_err = [v - args.itl_ms for r in done for v in itl_samples_ms(r)[0]]
    overhead = [(r.t_sent_ns - r.t_start_ns) / 1e6 for r in done if r.t_start_ns is not None]
    wall = wall1 - wall0
    return Row(
        concurrency=concurrency,
        requests=len(run.results),
        offered=concurrency * args.output_tokens / (duration_ms / 1e3),
        achieved=events / window_s if window_s > 0 else 0.0,
        client_cpu=100 * (cpu1 - cpu0) / wall,
        server_cpu=100 * (srv1 - srv0) / wall if srv0 is not None and srv1 is not None else None,
        ttft_err=_p50_p99(ttft_err),
        itl_err=_p50_p99(itl_err),
        overhead=_p50_p99(overhead),
        server_late=(stats["p50"], stats["p99"]),
        failed=len(run.results) - len(done),
        stopped=run.aborted,
        peak_rss_mib=peak,
        peak_is_lifetime=not reset,
    )


def render(rows: list[Row], title: str) -> Table:
    table = Table(title=title)
    for name in (
        "C", "req", "offered ev/s", "achieved ev/s", "client CPU %", "server CPU %", "TTFT err p50/p99 ms",
        "ITL err p50/p99 ms", "send overhead p50/p99 ms", "server late p50/p99 ms", "client peak RSS MiB", "failed",
        "note",
    ):  # fmt: skip
        table.add_column(name, justify="right")
    for r in rows:
        late = "/".join("-" if v is None else f"{v:.2f}" for v in r.server_late)
        table.add_row(
            str(r.concurrency),
            str(r.requests),
            f"{r.offered:,.0f}",
            f"{r.achieved:,.0f}",
            f"{r.client_cpu:.0f}",
            "-" if r.server_cpu is None else f"{r.server_cpu:.0f}",
            f"{r.ttft_err[0]:.2f}/{r.ttft_err[1]:.2f}",
            f"{r.itl_err[0]:.2f}/{r.itl_err[1]:.2f}",
            f"{r.overhead[0]:.2f}/{r.overhead[1]:.2f}",
            late,
            "-" if r.peak_rss_mib is None else f"{r.peak_rss_mib:,.0f}" + ("*" if r.peak_is_lifetime else ""),
            str(r.failed),
            ("sustained" if r.sustained else "falls behind") + (f"; {r.stopped}" if r.stopped else ""),
        )
    return table


async def sweep(args: argparse.Namespace) -> int:
    console = Console(width=200)
    cmd = [
        sys.executable, "-m", "bench.testing.testserver", "--port", "0", "--ttft-ms", str(args.ttft_ms), "--itl-ms",
        str(args.itl_ms), "--tokens-per-chunk", "1", "--output-tokens", str(args.output_tokens), "--loop", "select",
    ]  # fmt: skip
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        begun = time.monotonic()
        rows: list[Row] = []
        powers = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
        levels = [c for c in powers if args.min_concurrency <= c <= args.max_concurrency]
        for c in levels:
            if time.monotonic() - begun > args.budget_s:
                console.print(f"[yellow]run budget spent: skipping C>={c}")
                break
            rows.append(await measure_level(url, server.pid, c, args))
        load = os.getloadavg()
        title = (
            f"client ceiling: server ttft {args.ttft_ms} ms, itl {args.itl_ms} ms, {args.output_tokens} tokens, "
            f"1 token/event; {args.shard_size} connection(s) per pool; "
            f"load average {load[0]:.1f} on {os.cpu_count()} cores"
        )
        console.print(render(rows, title))
        sustained = [r for r in rows if r.sustained]
        if not sustained:
            console.print("no level was sustained")
            return 1
        best = max(sustained, key=lambda r: r.achieved)
        peak = max(rows, key=lambda r: r.achieved)
        per_stream = args.output_tokens / ((args.ttft_ms + (args.output_tokens - 1) * args.itl_ms) / 1e3)
        half_c = max(1, round(best.achieved / 2 / per_stream))
        half = await measure_level(url, server.pid, half_c, args)
        top = max([*rows, half], key=lambda r: r.peak_rss_mib or 0)
        console.print(render([half], f"at about half the sustained rate (C={half_c})"))
        console.print(
            f"highest sustained token-event rate: {best.achieved:,.0f} events/s (C={best.concurrency}); "
            f"peak achieved {peak.achieved:,.0f} events/s (C={peak.concurrency}).\n"
            f"at half of it (C={half_c}, {half.achieved:,.0f} events/s): TTFT error p50 {half.ttft_err[0]:.2f} / "
            f"p99 {half.ttft_err[1]:.2f} ms, ITL error p50 {half.itl_err[0]:.2f} / p99 {half.itl_err[1]:.2f} ms "
            f"(server's own lateness p50/p99 {half.server_late[0]}/{half.server_late[1]} ms). "
            f"Client peak RSS: {top.peak_rss_mib or 0:,.0f} MiB (C={top.concurrency}; the highest level peak). "
            f"Total {time.monotonic() - begun:.0f} s."
        )
        return 0
    finally:
        server.terminate()
        server.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--itl-ms", type=float, default=5.0)
    p.add_argument("--output-tokens", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2, help="measured requests per level = rounds x concurrency")
    p.add_argument("--max-concurrency", type=int, default=512)
    p.add_argument("--min-concurrency", type=int, default=1)
    p.add_argument("--shard-size", type=int, default=1, help="connections per httpx pool inside the client")
    p.add_argument("--level-budget-s", type=float, default=12.0)
    p.add_argument("--budget-s", type=float, default=140.0)
    args = p.parse_args(argv)
    return asyncio.run(sweep(args))


if __name__ == "__main__":
    sys.exit(main())
