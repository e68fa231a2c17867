"""``python -m bench.testing.testserver``: the test server as a process, with the process-level fault modes."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence

from ._config import SERVER_NAME, TestServerConfig
from ._server import TestServer, precise_event_loop

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.testing.testserver",
        description="A streaming OpenAI-compatible test server whose timing is known exactly.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0: pick a free port (printed on stdout)")
    p.add_argument("--ttft-ms", type=float, default=50.0)
    p.add_argument("--itl-ms", type=float, default=10.0, help="time between consecutive chunks")
    p.add_argument("--tokens-per-chunk", type=int, default=1)
    p.add_argument("--output-tokens", type=int, default=64)
    p.add_argument("--no-usage", action="store_true", help="never report token counts")
    p.add_argument("--fail-after-chunks", type=int, default=None)
    p.add_argument("--fail-mode", choices=["close", "error_event"], default="close")
    p.add_argument("--fail-status", type=int, default=None)
    p.add_argument("--fail-message", default=None, help="the message of injected errors (default: says it is a test)")
    p.add_argument("--role-chunk", action="store_true", help="chat: send a role-only chunk before the first token")
    p.add_argument(
        "--draft-tokens-per-step",
        type=int,
        default=None,
        help="report draft counts (llama.cpp timings, SGLang meta_info)",
    )
    p.add_argument(
        "--incremental-output",
        action="store_true",
        help="/generate: only new text and ids per chunk (SGLang --incremental-streaming-output)",
    )
    p.add_argument("--cached-tokens", type=int, default=None, help="report this many cached prompt tokens")
    p.add_argument("--prefix-cache", action="store_true", help="simulate a prefix cache and report its hits")
    p.add_argument("--model", default=SERVER_NAME)
    p.add_argument(
        "--loop",
        choices=["select", "epoll"],
        default="select",
        help="select: microsecond timers, "
        "fewer than ~1000 connections; epoll: asyncio's default, millisecond timers, no fd limit",
    )
    p.add_argument("--spin-us", type=int, default=0, help="yield-spin this long before each deadline (epoll)")
    faults = p.add_argument_group("fault modes (see tests/runner/fault_cases.py)")
    faults.add_argument("--hang-after-chunks", type=int, default=None, help="stop sending tokens, keep streams open")
    faults.add_argument(
        "--pause-file", default=None, metavar="PATH", help="while PATH exists, send no more tokens (streams stay open)"
    )
    faults.add_argument("--bad-body", choices=["html", "malformed_sse"], default=None)
    faults.add_argument("--never-ready", action="store_true", help="/health answers 503 forever")
    faults.add_argument("--max-streams", type=int, default=None, help="answer 503 while this many streams run")
    faults.add_argument("--exit-at-start", type=int, default=None, metavar="STATUS", help="exit before listening")
    faults.add_argument("--die-after-requests", type=int, default=None, metavar="N", help="SIGKILL itself at request N")
    faults.add_argument("--ignore-sigterm", action="store_true", help="only SIGKILL stops it")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = TestServerConfig(
            ttft_ms=args.ttft_ms,
            itl_ms=args.itl_ms,
            tokens_per_chunk=args.tokens_per_chunk,
            output_tokens=args.output_tokens,
            usage=not args.no_usage,
            fail_after_chunks=args.fail_after_chunks,
            fail_mode=args.fail_mode,
            fail_status=args.fail_status,
            fail_message=args.fail_message,
            role_chunk=args.role_chunk,
            draft_tokens_per_step=args.draft_tokens_per_step,
            incremental_output=args.incremental_output,
            cached_tokens=args.cached_tokens,
            prefix_cache=args.prefix_cache,
            model=args.model,
            spin_us=args.spin_us,
            hang_after_chunks=args.hang_after_chunks,
            pause_file=args.pause_file,
            bad_body=args.bad_body,
            ready=not args.never_ready,
            max_streams=args.max_streams,
        )
    except ValueError as exc:
        print(f"bench.testing.testserver: {exc}", file=sys.stderr)
        return 2
    if args.exit_at_start is not None:
        print(
            f"{SERVER_NAME}: fatal: injected start-up failure (--exit-at-start {args.exit_at_start})", file=sys.stderr
        )
        return int(args.exit_at_start)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # before listening: a signal sent once it listens is handled
            if args.ignore_sigterm:
                signal.signal(sig, signal.SIG_IGN)
            else:
                loop.add_signal_handler(sig, stop.set)
        server = TestServer(config, args.host, args.port, die_after_requests=args.die_after_requests)
        await server.start()
        print(f"{SERVER_NAME} listening on {server.url}", flush=True)
        await stop.wait()
        await server.close()

    with asyncio.Runner(loop_factory=precise_event_loop if args.loop == "select" else None) as runner:
        runner.run(run())
    return 0
