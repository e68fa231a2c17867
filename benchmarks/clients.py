"""benchbook's client side by side with its peers: the same server, the same CPUs, interleaved rounds.

Clients (each a process of its own, against a fresh zero-delay server per run, ``benchmarks/peers/server.py``):

* ``bare``: a standard-library client that only counts events (``benchmarks/peers/bare_client.py``): the ceiling;
* ``benchbook``: the harness's client and load generator as ``bench run`` drives them
  (``benchmarks/peers/benchbook_client.py``), with every token's receipt time;
* ``guidellm`` 0.8.1 and ``aiperf`` 0.13.0 from their own virtual environments (``benchmarks/peers/setup.sh``;
  a peer whose environment is missing is skipped and the table says so).

For C in ``--levels`` and ``--rounds`` rounds (the clients' order rotates every round), each client sends
``--warmup`` x C warm-up and ``--requests`` x C measured requests of ``--output-tokens`` tokens (ignore_eos).
Per run: tokens/s by the tool's own count and by the server's count (tokens sent over the server's busy window),
the client's CPU seconds per 1,000 tokens in that window (its whole process tree) and over its whole life
(start-up included), the server's CPU share (near 100 %: the server, not the client, was the limit), failed
requests, and for benchbook the p50/p99 lag between the server's send time and the client's receipt time.
The table gives medians over rounds and each client's rate as a ratio to benchbook's in the same round.

    python benchmarks/clients.py                                  # ~15 minutes on 2 cores
    python benchmarks/clients.py --levels 64 --rounds 1 --clients bare benchbook --out /tmp/c.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))

from machine_facts import commit, machine  # noqa: E402
from measure import Run, run_client  # noqa: E402

from bench.benchmark_results import CLIENTS, result_head, save_result  # noqa: E402

__all__ = ["main"]

PEERS = Path(os.environ.get("BENCHBOOK_PEERS_DIR", Path.home() / ".cache/benchbook/peers"))
GUIDELLM = PEERS / "guidellm-0.8.1"
AIPERF = PEERS / "aiperf-0.13.0"
TOKENIZER = PEERS / "smollm2-tokenizer"
MODEL = "benchbook-testserver"
RESULT = ROOT / "benchmarks" / "results" / "clients.json"
ORDER = ("bare", "benchbook", "guidellm", "aiperf")

Command = Callable[[str, Path], list[str]]


class Client:
    def __init__(self, name: str, command: Command, parse: Callable[[Path], dict[str, Any]], tree: bool) -> None:
        self.name, self.command, self.parse, self.tree = name, command, parse, tree


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def clients(c: int, args: argparse.Namespace) -> dict[str, Client]:
    n, w, out = args.requests * c, args.warmup * c, args.output_tokens
    py = sys.executable
    peers = ROOT / "benchmarks" / "peers"

    def bare(url: str, work: Path) -> list[str]:
        return [py, str(peers / "bare_client.py"), "--url", url, "--concurrency", str(c), "--requests", str(n),
                "--warmup", str(w), "--max-tokens", str(out), "--out", str(work / "result.json")]  # fmt: skip

    def parse_bare(work: Path) -> dict[str, Any]:
        r = _json(work / "result.json")
        tokens = r["events"] - 3 * r["ok"]  # the finish, usage and [DONE] events carry no token
        return {"requests": r["requests"], "failed": r["failed"], "tool_tok_s": tokens / r["window_s"]}

    def benchbook(url: str, work: Path) -> list[str]:
        return [py, str(peers / "benchbook_client.py"), "--url", url, "--concurrency", str(c), "--requests", str(n),
                "--warmup", str(w), "--max-tokens", str(out), "--out", str(work / "result.json"),
                "--timestamps", str(work / "timestamps.json")]  # fmt: skip

    def parse_benchbook(work: Path) -> dict[str, Any]:
        r = _json(work / "result.json")
        return {k: r[k] for k in ("requests", "failed", "errors", "tool_tok_s")}

    def guidellm(url: str, work: Path) -> list[str]:
        return [str(GUIDELLM / "bin/guidellm"), "run",
                "--backend", f"kind=openai_http,target={url},model={MODEL},request_format=/v1/completions",
                "--profile", f"kind=concurrent,streams={c}", "--constraint", f"kind=max_requests,count={n + w}",
                "--tokenizer", f"kind=huggingface_auto,model={TOKENIZER}",
                "--data", f"kind=synthetic_text,prompt_tokens=16,output_tokens={out}",
                "--output", f"kind=json,path={work / 'guidellm.json'}", "--disable-progress"]  # fmt: skip

    def parse_guidellm(work: Path) -> dict[str, Any]:
        m = _json(work / "guidellm.json")["benchmarks"][0]["metrics"]
        totals = m["request_totals"]
        return {
            "requests": totals["total"],
            "failed": totals["errored"] + totals["incomplete"],
            "tool_tok_s": m["output_tokens_per_second"]["successful"]["mean"],
        }

    def aiperf(url: str, work: Path) -> list[str]:
        return [str(AIPERF / "bin/aiperf"), "profile", "--model", MODEL, "--url", url, "--endpoint-type",
                "completions", "--streaming", "--concurrency", str(c), "--request-count", str(n),
                "--warmup-request-count", str(w), "--tokenizer", str(TOKENIZER), "--use-server-token-count",
                "--isl", "16", "--osl", str(out), "--extra-inputs", "ignore_eos:true", "--artifact-dir",
                str(work / "aiperf"), "--no-server-metrics", "--no-gpu-telemetry", "--ui", "none"]  # fmt: skip

    def parse_aiperf(work: Path) -> dict[str, Any]:
        r = _json(work / "aiperf" / "profile_export_aiperf.json")
        errors = r.get("error_summary") or []
        failed = sum(int(e.get("count", 0)) for e in errors) if isinstance(errors, list) else 0
        return {
            "requests": int(r["request_count"]["avg"]),
            "failed": failed,
            "errors": [str(e)[:200] for e in errors][:5] if isinstance(errors, list) else [],
            "tool_tok_s": r["output_token_throughput"]["avg"],
        }

    return {
        "bare": Client("bare", bare, parse_bare, tree=False),
        "benchbook": Client("benchbook", benchbook, parse_benchbook, tree=False),
        "guidellm": Client("guidellm", guidellm, parse_guidellm, tree=True),
        "aiperf": Client("aiperf", aiperf, parse_aiperf, tree=True),
    }


def available(names: list[str]) -> tuple[list[str], dict[str, str]]:
    missing = {}
    if "guidellm" in names and not (GUIDELLM / "bin/guidellm").exists():
        missing["guidellm"] = f"no {GUIDELLM}: run benchmarks/peers/setup.sh"
    if "aiperf" in names and not (AIPERF / "bin/aiperf").exists():
        missing["aiperf"] = f"no {AIPERF}: run benchmarks/peers/setup.sh"
    return [n for n in names if n not in missing], missing


def summarize(runs: list[Run], levels: list[int], names: list[str]) -> list[dict[str, Any]]:
    """Medians over rounds per (C, client), and each client's server-counted rate over benchbook's, round by round."""
    by = {(r.concurrency, r.client, r.round): r for r in runs}
    rows = []
    for c in levels:
        for name in names:
            mine = [r for r in runs if r.concurrency == c and r.client == name]
            if not mine:
                continue

            def med(values: list[float | None]) -> float | None:
                vals = [v for v in values if v is not None]
                return statistics.median(vals) if vals else None

            js = [r.as_json() for r in mine]
            ratios = [
                r.server_tok_s / by[(c, "benchbook", r.round)].server_tok_s
                for r in mine
                if (c, "benchbook", r.round) in by and by[(c, "benchbook", r.round)].server_tok_s > 0
            ]
            lag = [j["lag_ms"] for j in js if j["lag_ms"]]
            rows.append(
                {
                    "concurrency": c,
                    "client": name,
                    "rounds": len(mine),
                    "server_tok_s": med([r.server_tok_s for r in mine]),
                    "tool_tok_s": med([j["tool_tok_s"] for j in js]),
                    "cpu_s_per_1k_tokens": med([j["cpu_s_per_1k_tokens"] for j in js]),
                    "cpu_s_per_1k_tokens_total": med([j["cpu_s_per_1k_tokens_total"] for j in js]),
                    "server_cpu_percent": med([j["server_cpu_percent"] for j in js]),
                    "failed": sum(j["failed"] or 0 for j in js),
                    "failed_runs": sum(1 for r in mine if not r.ok),
                    "vs_benchbook": med(ratios),
                    "vs_benchbook_per_round": [round(x, 3) for x in ratios],
                    "lag_ms_p50": med([x["p50"] for x in lag]),
                    "lag_ms_p99": med([x["p99"] for x in lag]),
                }
            )
    return rows


def _f(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def render(rows: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title)
    for col in ("C", "client", "tok/s (server)", "tok/s (tool)", "÷ benchbook", "CPU s/1k tok", "CPU s/1k tok (life)",
                "server CPU %", "failed", "lag p50/p99 ms"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in rows:
        lag = "-" if r["lag_ms_p50"] is None else f"{r['lag_ms_p50']:.2f}/{r['lag_ms_p99']:.2f}"
        table.add_row(
            str(r["concurrency"]), r["client"], _f(r["server_tok_s"], ",.0f"), _f(r["tool_tok_s"], ",.0f"),
            _f(r["vs_benchbook"], ".2f"), _f(r["cpu_s_per_1k_tokens"], ".4f"),
            _f(r["cpu_s_per_1k_tokens_total"], ".4f"), _f(r["server_cpu_percent"], ".0f"),
            f"{r['failed']}" + (f" ({r['failed_runs']} runs)" if r["failed_runs"] else ""), lag,
        )  # fmt: skip
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", type=int, nargs="+", default=[64, 256, 512])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", nargs="+", choices=ORDER, default=list(ORDER))
    p.add_argument("--requests", type=int, default=4, help="measured requests per level, x concurrency")
    p.add_argument("--warmup", type=int, default=1, help="warm-up requests per level, x concurrency")
    p.add_argument("--output-tokens", type=int, default=256)
    p.add_argument("--timeout-s", type=float, default=600.0, help="per client run")
    p.add_argument("--out", type=Path, default=RESULT, help=f"the JSON result (default {RESULT.relative_to(ROOT)})")
    p.add_argument("--keep", type=Path, default=None, help="keep every run's files in this folder")
    args = p.parse_args(argv)
    console = Console(width=160)
    names, missing = available(args.clients)
    for name, why in missing.items():
        console.print(f"[yellow]skipping {name}: {why}")
    started = datetime.now(UTC).replace(microsecond=0)
    load_start = os.getloadavg()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="benchbook-clients-") as tmp:
        base = args.keep or Path(tmp)
        for round_no in range(1, args.rounds + 1):
            order = names[round_no - 1 :] + names[: round_no - 1]  # rotate: no client always runs first
            for c in args.levels:
                table = clients(c, args)
                for name in order:
                    client = table[name]
                    work = base / f"r{round_no}-c{c}-{name}"
                    run = run_client(
                        name, client.command, client.parse, concurrency=c, round_no=round_no, work=work,
                        output_tokens=args.output_tokens, warmup=args.warmup * c, timeout_s=args.timeout_s,
                        tree=client.tree, stamps=name == "benchbook",
                    )  # fmt: skip
                    runs.append(run)
                    j = run.as_json()
                    console.print(
                        f"round {round_no} C={c} {name:9} server {j['server_tok_s']:>9,.0f} tok/s, tool "
                        f"{_f(j['tool_tok_s'], ',.0f'):>9}, CPU/1k {_f(j['cpu_s_per_1k_tokens'], '.4f')}, failed "
                        f"{j['failed']}, server CPU {_f(j['server_cpu_percent'], '.0f')} %"
                        + ("" if run.ok else f" [red]NOT OK (exit {run.returncode}; {run.note or j['errors'][:1]})")
                    )
    rows = summarize(runs, args.levels, names)
    load_end = os.getloadavg()
    title = (
        f"clients side by side: {args.output_tokens} tokens, zero-delay test server, medians of {args.rounds} "
        f"round(s); load average {load_start[0]:.1f} -> {load_end[0]:.1f} on {os.cpu_count()} cores"
    )
    console.print(render(rows, title))
    result = {
        **result_head(CLIENTS),
        "date": started.isoformat().replace("+00:00", "Z"),
        **commit(),
        "machine": {**machine(), "load_average_start": load_start, "load_average_end": load_end},
        "settings": {
            "levels": args.levels,
            "rounds": args.rounds,
            "output_tokens": args.output_tokens,
            "requests_per_level": f"{args.requests}x",
            "warmup_per_level": f"{args.warmup}x",
            "server": "benchmarks/peers/server.py: benchbook's test server, zero delay, one token per chunk, "
            "one write per chunk, each answer rendered once per request shape",
        },
        "clients": {name: describe(name) for name in names},
        "skipped": missing,
        "summary": rows,
        "runs": [r.as_json() for r in runs],
    }
    save_result(args.out, CLIENTS, result)
    console.print(f"wrote {args.out}")
    return 0 if all(r.ok for r in runs) else 1


def describe(name: str) -> dict[str, Any]:
    if name == "bare":
        return {"what": "standard-library asyncio client that only counts SSE events (benchmarks/peers/bare_client.py)"}
    if name == "benchbook":
        from bench import __version__

        return {
            "version": __version__,
            "what": "StreamingClient + run_level + summarize_level, as bench run drives them "
            "(benchmarks/peers/benchbook_client.py)",
        }
    venv = GUIDELLM if name == "guidellm" else AIPERF
    freeze = (venv / ".benchbook-ready").read_text().splitlines() if (venv / ".benchbook-ready").exists() else []
    pins = [line for line in freeze if line.split("==")[0].lower() in (name, "torch", "httpx", "aiohttp")]
    how = "--use-server-token-count" if name == "aiperf" else "its own tokenizer count (SmolLM2 vocabulary)"
    return {"version": venv.name.split("-", 1)[1], "packages": pins, "token_count": how}


if __name__ == "__main__":
    sys.exit(main())
