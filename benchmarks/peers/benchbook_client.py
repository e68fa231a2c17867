"""benchbook's client in the side-by-side benchmark: one fixed-concurrency level, as ``bench run`` drives it.

The harness's own parts, nothing else: one :class:`~bench.runner.client.StreamingClient` (connections opened
first) and the load generator's :func:`~bench.runner.load_generator.run_level` with warm-up requests, or with
``--processes N`` the sharded client (:class:`~bench.runner.shards.ShardedClient`) that ``bench run
--client-processes N`` uses. The tool's output throughput is the record's formula (Σ the server's
``usage.completion_tokens`` of the completed measured requests / the level window), computed here so that this
script needs no pydantic (the H200 image has none). Each request's prompt opens with its own word
(``r<index>``), so the benchmark can match every token's receipt time here with the server's send time of the
same token (``--timestamps``).

    python benchbook_client.py --url URL --concurrency 64 --requests 256 --warmup 64 --out result.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.runner.client import StreamingClient  # noqa: E402
from bench.runner.event_loop import run as run_on_loop  # noqa: E402
from bench.runner.event_loop import running_loop  # noqa: E402
from bench.runner.load_generator import LevelRun, run_level  # noqa: E402
from bench.runner.request import RequestSpec  # noqa: E402
from bench.runner.shards import ShardedClient  # noqa: E402


def _spec(i: int, max_tokens: int) -> RequestSpec:
    return RequestSpec(prompt=f"r{i} benchmark prompt", max_tokens=max_tokens, ignore_eos=True, api="completions")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    warm = [_spec(i, args.max_tokens) for i in range(args.warmup)]
    specs = [_spec(args.warmup + i, args.max_tokens) for i in range(args.requests)]
    level_run: LevelRun
    if args.processes > 1:
        async with ShardedClient(
            args.url, processes=args.processes, max_connections=args.concurrency, timeout_s=120
        ) as sharded:
            level_run = await sharded.run_level(specs, args.concurrency, warmup=warm)
    else:
        async with StreamingClient(args.url, max_connections=args.concurrency, timeout_s=120) as client:
            await client.warm_connections(args.concurrency)
            level_run = await run_level(client, specs, args.concurrency, warmup=warm)
    failed = [r for r in level_run.results if not r.ok]
    tokens = sum(r.output_tokens or 0 for r in level_run.results if r.ok)
    throughput = tokens / (level_run.window_ns / 1e9) if level_run.window_ns > 0 else None
    result: dict[str, Any] = {
        "client": "benchbook",
        "event_loop": running_loop(),  # the shards run on the same (bench.runner.event_loop)
        "requests": len(level_run.results),
        "ok": len(level_run.results) - len(failed),
        "failed": len(failed),
        "errors": sorted({f"{r.error_kind}: {r.error}" for r in failed})[:5],
        "output_tokens": tokens,
        "tool_tok_s": throughput,
        "window_s": level_run.window_ns / 1e9,
        "window_start_ns": level_run.window_start_ns,
    }
    if args.timestamps is not None:
        every = [*level_run.warmup_results, *level_run.results]
        stamps = {f"r{i}": r.chunk_times_ns for i, r in enumerate(every) if r.ok}
        args.timestamps.write_text(json.dumps(stamps))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--processes", type=int, default=1, help="client processes (the sharded client)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--timestamps", type=Path, default=None, help="write each request's chunk receipt times here")
    args = p.parse_args(argv)
    result = run_on_loop(run(args))
    args.out.write_text(json.dumps(result) + "\n")
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
