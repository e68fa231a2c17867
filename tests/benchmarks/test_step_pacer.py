"""The benchmark server's step pacing (benchmarks/peers/server.py --pace step), which the client-scaling benchmark's
lag goal is measured against: one ticker per process, every active stream's next chunk per tick, each chunk stamped
just before its write, every token delivered."""

from __future__ import annotations

import asyncio
import selectors
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))

from server import NamedStreamServer, StepPacer  # noqa: E402

from bench.runner.client import StreamingClient  # noqa: E402
from bench.runner.load_generator import run_level  # noqa: E402
from bench.runner.request import RequestSpec  # noqa: E402
from bench.testing.testserver import TestServerConfig  # noqa: E402

ITL_MS = 20.0
TOKENS = 6


async def _paced(streams: int) -> tuple[NamedStreamServer, list[list[int]]]:
    server = NamedStreamServer(TestServerConfig(ttft_ms=ITL_MS, itl_ms=ITL_MS, output_tokens=TOKENS), "127.0.0.1", 0)
    server.pacer = StepPacer(ITL_MS / 1e3)
    await server.start()
    try:
        specs = [
            RequestSpec(prompt=f"r{i} go", max_tokens=TOKENS, ignore_eos=True, api="completions")
            for i in range(streams)
        ]
        async with StreamingClient(server.url, max_connections=streams) as client:
            await client.warm_connections(streams)
            run = await run_level(client, specs, streams)
        assert all(r.ok for r in run.results), [r.error for r in run.results]
        assert [r.output_tokens for r in run.results] == [TOKENS] * streams  # every token delivered
        received = [r.chunk_times_ns for r in run.results]
    finally:
        await server.close()
    return server, received


def test_step_pacing_writes_every_stream_once_per_tick_and_stamps_each_write() -> None:
    loop = asyncio.SelectorEventLoop(selectors.SelectSelector())
    try:
        server, received = loop.run_until_complete(_paced(4))
    finally:
        loop.close()
    logs = [s for s in server.stats.streams if s.emit_ns]
    assert len(logs) == 4 and all(len(s.emit_ns) == TOKENS for s in logs)
    itl_ns = ITL_MS * 1e6
    for log in logs:
        gaps = [b - a for a, b in zip(log.emit_ns, log.emit_ns[1:], strict=False)]
        assert all(g >= 0.5 * itl_ns for g in gaps), gaps  # one chunk per tick, never two in one
    # streams that started together get chunk k at the same tick: their k-th stamps lie far closer than a tick
    firsts = sorted(log.emit_ns[0] for log in logs)
    assert firsts[-1] - firsts[0] < 0.5 * itl_ns
    # each chunk was received after the server stamped it (one clock for both ends)
    stamps = sorted(log.emit_ns for log in logs)
    for got, sent in zip(sorted(received), stamps, strict=True):
        assert len(got) == len(sent) and all(r >= s for r, s in zip(got, sent, strict=True))
