"""Does the sharded client scale? benchbook's client on 1, 2, 4, ... processes against a server that can take it.

The server is benchbook's test server with a stream log (``benchmarks/peers/server.py``) on ``--server-processes``
processes behind one port (SO_REUSEPORT), at zero delay. For each client process count the client
(``benchmarks/peers/benchbook_client.py --processes N``: the sharded client ``bench run --client-processes N``
uses) sends ``--warmup`` x C warm-up and ``--requests`` x C measured requests; per run: tokens/s by the server's
count and the client's, the ratio to one process, the client's CPU per 1,000 tokens (all its processes) and the
server's CPU. Then the timestamp lag at about half the highest rate: the server paces every stream (one token
every ``itl`` ms, chosen so that C streams offer half the ceiling) and each token's receipt time is set against
its send time (both CLOCK_MONOTONIC), p50/p99.

The paced run must not measure CPU oversubscription instead of the client: every busy process beyond the cores
delays some receipt by a scheduler time slice (milliseconds). So the server paces as a batched engine does
(``--paced-pace step``, default: one ticker per server process writes every active stream's next chunk each ``itl``
ms, as a decode step emits a token for every running request; a write per token, not a timer and a task wake-up
per stream and token as ``--paced-pace stream`` costs), and the run has its own split of the cores, stated in the
result: the server on ``--paced-server-processes`` (default a quarter of the cores with step pacing, half with
stream pacing), the client on ``--paced-processes`` (default: the best row's count, at most the cores left after
the server's, less one for the kernel's network work and this script). The offered rate stays half the ceiling the
rows measured; the goal is not changed. ``--paced-itl-ms`` sets the pacing by hand (a rate a small machine can
hold); the lag goal is then not judged (it is defined at half the ceiling).

The client runs on the event loop ``bench run`` would use here (``bench.runner.event_loop``: uvloop where installed);
each row states it.

Needs only the repository, Python >= 3.11, httpx and rich (no pydantic): it runs on the H200 image as it is.

    python benchmarks/client_scaling.py                                  # 1 2 4 8 processes, C=512
    python benchmarks/client_scaling.py --processes 1 2 --server-processes 1 --requests 2 --out /tmp/s.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))

from machine_facts import commit, machine, usable_cores  # noqa: E402
from measure import Run, run_client  # noqa: E402

from bench.benchmark_results import CLIENT_SCALING, result_head, save_result  # noqa: E402
from bench.runner.shards import shared_clock  # noqa: E402

__all__ = ["main"]

RESULT = ROOT / "benchmarks" / "results" / "client-scaling.json"


def run(
    args: argparse.Namespace, work: Path, processes: int, server: list[str], label: str, server_processes: int
) -> Run:
    c = args.concurrency

    def command(url: str, run_dir: Path) -> list[str]:
        return [sys.executable, str(ROOT / "benchmarks/peers/benchbook_client.py"), "--url", url,
                "--concurrency", str(c), "--requests", str(args.requests * c), "--warmup", str(args.warmup * c),
                "--max-tokens", str(args.output_tokens), "--processes", str(processes),
                "--out", str(run_dir / "result.json"), "--timestamps", str(run_dir / "timestamps.json")]  # fmt: skip

    def parse(run_dir: Path) -> dict[str, Any]:
        r = json.loads((run_dir / "result.json").read_text())
        return {k: r.get(k) for k in ("requests", "failed", "errors", "tool_tok_s", "event_loop")}

    return run_client(
        "benchbook", command, parse, concurrency=c, round_no=processes, work=work / label,
        output_tokens=args.output_tokens, warmup=args.warmup * c, timeout_s=args.timeout_s,
        server_args=["--processes", str(server_processes), *server], tree=processes > 1,
        server_tree=server_processes > 1, stamps=True,
    )  # fmt: skip


def row(r: Run, processes: int, base: float | None, **extra: Any) -> dict[str, Any]:
    j = r.as_json()
    window = r.server_window_s or None
    return {
        "client_processes": processes,
        "concurrency": r.concurrency,
        "server_tok_s": j["server_tok_s"],
        "tool_tok_s": j["tool_tok_s"],
        "vs_one_process": round(r.server_tok_s / base, 3) if base else None,
        "cpu_s_per_1k_tokens": j["cpu_s_per_1k_tokens"],
        "client_cpu_percent": None if r.cpu_s_window is None or not window else round(100 * r.cpu_s_window / window),
        "server_cpu_percent": j["server_cpu_percent"],
        "requests": j["requests"],
        "failed": j["failed"],
        "ok": r.ok,
        "lag_ms": j["lag_ms"],
        "event_loop": r.result.get("event_loop"),  # bench.runner.event_loop: uvloop where installed
        **extra,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4, 8], help="client process counts")
    p.add_argument("--server-processes", type=int, default=max(1, usable_cores() // 4))
    p.add_argument("--concurrency", type=int, default=512)
    p.add_argument("--requests", type=int, default=8, help="measured requests, x concurrency")
    p.add_argument("--warmup", type=int, default=1, help="warm-up requests, x concurrency")
    p.add_argument("--output-tokens", type=int, default=256)
    p.add_argument("--timeout-s", type=float, default=240.0)
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--commit", default=None, help="the benchbook commit measured, where the tree is no git checkout")
    p.add_argument("--label", default=None, help="the machine in words, for the site (e.g. 'H200 host, 16 cores')")
    p.add_argument("--goal-scaling", type=float, default=4.0, help="goal: best rate / the 1-process rate")
    p.add_argument("--goal-lag-p99-ms", type=float, default=1.0, help="goal: p99 timestamp lag at half the ceiling")
    p.add_argument(
        "--paced-pace",
        choices=["step", "stream"],
        default="step",
        help="paced run's server: step = one ticker per process, every stream's next chunk per tick (a batched "
        "engine's decode step); stream = a timer per stream and token",
    )
    p.add_argument(
        "--paced-server-processes",
        type=int,
        default=None,
        help="paced run's server (default: cores/4 step, cores/2 stream)",
    )
    p.add_argument("--paced-processes", type=int, default=None, help="paced run's client (default: see above)")
    p.add_argument("--paced-itl-ms", type=float, default=None, help="pace by hand (the lag goal is then not judged)")
    args = p.parse_args(argv)
    console = Console(width=160)
    problem = shared_clock()
    if problem is not None and max(args.processes) > 1:
        console.print(f"[red]{problem}")
        return 2
    started = datetime.now(UTC).replace(microsecond=0)
    load_start = os.getloadavg()
    rows: list[dict[str, Any]] = []
    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchbook-scaling-") as tmp:
        base: float | None = None
        runs: list[tuple[int, Run]] = []
        for n in args.processes:
            r = run(args, Path(tmp), n, [], f"p{n}", args.server_processes)
            base = base or (r.server_tok_s if n == 1 else None)
            runs.append((n, r))
            rows.append(row(r, n, base))
            console.print(f"{n} client process(es): {r.server_tok_s:,.0f} tok/s (server count), ok={r.ok}")
        best_n, best = max(runs, key=lambda x: x[1].server_tok_s)
        # half the ceiling: C streams, one token every itl ms each -> C * 1000 / itl tok/s offered
        itl = args.paced_itl_ms or args.concurrency * 1000 / (best.server_tok_s / 2)
        paced = ["--ttft-ms", f"{itl:.4f}", "--itl-ms", f"{itl:.4f}", "--loop", "select", "--pace", args.paced_pace]
        paced_server, paced_n, rule = paced_split(args, best_n)
        console.print(f"paced run: itl {itl:.3f} ms; {rule}")
        half = run(args, Path(tmp), paced_n, paced, "half", paced_server)
        half_row = row(
            half, paced_n, base, itl_ms=round(itl, 4), offered_tok_s=round(args.concurrency * 1000 / itl),
            server_processes=paced_server, split=rule, by_hand=args.paced_itl_ms is not None,
        )  # fmt: skip
    load_end = os.getloadavg()
    table = Table(
        title=f"sharded client: C={args.concurrency}, {args.output_tokens} tokens, server on {args.server_processes} "
        f"process(es), {usable_cores()} cores, load {load_start[0]:.1f} -> {load_end[0]:.1f}, "
        f"event loop {', '.join(sorted({str(r_.get('event_loop')) for r_ in [*rows, half_row]}))}"
    )
    for col in ("client processes", "tok/s (server)", "tok/s (client)", "× 1 process", "CPU s/1k tok",
                "client CPU %", "server CPU %", "failed", "lag p50/p99 ms"):  # fmt: skip
        table.add_column(col, justify="right")
    for r_ in [*rows, half_row]:
        lag = r_["lag_ms"]
        name = str(r_["client_processes"])
        if "itl_ms" in r_:
            name += f" (paced, itl {r_['itl_ms']:.2f} ms, server on {r_['server_processes']})"
        table.add_row(
            name, f"{r_['server_tok_s']:,.0f}", "-" if r_["tool_tok_s"] is None else f"{r_['tool_tok_s']:,.0f}",
            "-" if r_["vs_one_process"] is None else f"{r_['vs_one_process']:.2f}",
            "-" if r_["cpu_s_per_1k_tokens"] is None else f"{r_['cpu_s_per_1k_tokens']:.4f}",
            str(r_["client_cpu_percent"]), str(r_["server_cpu_percent"]), str(r_["failed"]),
            "-" if not lag else f"{lag['p50']:.3f}/{lag['p99']:.3f}",
        )  # fmt: skip
    console.print(table)
    result = {
        **result_head(CLIENT_SCALING),
        "date": started.isoformat().replace("+00:00", "Z"),
        **commit(args.commit),
        "machine": {**machine(), "label": args.label, "load_average_start": load_start, "load_average_end": load_end},
        "settings": {
            "concurrency": args.concurrency,
            "output_tokens": args.output_tokens,
            "requests_per_level": f"{args.requests}x",
            "warmup_per_level": f"{args.warmup}x",
            "server_processes": args.server_processes,
            "clock": "perf_counter_ns = clock_gettime(CLOCK_MONOTONIC), one clock for every process",
        },
        "rows": rows,
        "half_ceiling": half_row,
        "goals": goals(args, rows, half_row),
        "wall_s": round(time.monotonic() - begun, 1),
    }
    save_result(args.out, CLIENT_SCALING, result)
    console.print(f"wrote {args.out}")
    for name, goal in result["goals"].items():
        verdict = "met" if goal["met"] else "NOT met" if goal["met"] is False else "not measured"
        console.print(f"goal {name}: {goal['value']} ({goal['target']}): {verdict}")
    if not all(r_["ok"] for r_ in [*rows, half_row]):
        return 1
    return 0 if all(g["met"] for g in result["goals"].values()) else 3


def paced_split(args: argparse.Namespace, best_n: int) -> tuple[int, int, str]:
    """The paced run's server and client process counts, and the rule that chose them, in words."""
    cores = usable_cores()
    server = args.paced_server_processes or max(1, cores // (4 if args.paced_pace == "step" else 2))
    room = max(1, cores - server - 1)
    client = args.paced_processes or min(best_n, room)
    how = "given" if args.paced_processes else f"min(best row {best_n}, {cores} cores - {server} server - 1)"
    busy = "" if client + server < cores else f"; {client + server} busy processes on {cores} cores: oversubscribed"
    return server, client, f"server {server} process(es), client {client} ({how}){busy}"


def goals(args: argparse.Namespace, rows: list[dict[str, Any]], half: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The issue's two goals for the sharded client, from the rows: ``met`` is None where a figure is missing."""
    ratios = [r["vs_one_process"] for r in rows if r["ok"] and r["vs_one_process"] is not None]
    best = max(ratios, default=None)
    p99 = half["lag_ms"]["p99"] if half["ok"] and half["lag_ms"] else None
    judged = p99 is not None and not half.get("by_hand")
    return {
        "scaling": {
            "target": f">= {args.goal_scaling:g}x the 1-process rate (server count)",
            "value": best,
            "met": None if best is None or len(ratios) < 2 else best >= args.goal_scaling,
        },
        "lag_p99_half_ceiling_ms": {
            "target": f"< {args.goal_lag_p99_ms:g} ms",
            "value": p99,
            "met": None if not judged or p99 is None else p99 < args.goal_lag_p99_ms,
        },
    }


if __name__ == "__main__":
    sys.exit(main())
