"""The sharded client (several client processes, one level) against the in-process known-timing test server, and
``bench run --client-processes`` (one record, the process count stated)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from bench.record.load import load_record
from bench.runner.client import StreamingClient
from bench.runner.event_loop import chosen_loop
from bench.runner.load_generator import LevelRun, run_level
from bench.runner.request import RequestResult, RequestSpec
from bench.runner.shards import ShardedClient, shared_clock, split_concurrency, split_requests
from bench.testing.testserver import ServerStats, TestServerConfig, expected_timing, serve

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
ROOT = Path(__file__).resolve().parents[2]
CFG = TestServerConfig(ttft_ms=30, itl_ms=4, output_tokens=12)


def _specs(n: int, start: int = 0) -> list[RequestSpec]:
    return [RequestSpec(prompt=f"r{start + i} words", max_tokens=12, api="completions") for i in range(n)]


async def _sharded(
    processes: int, concurrency: int, specs: list[RequestSpec], warmup: list[RequestSpec], **kw: Any
) -> tuple[LevelRun, ServerStats, int, int]:
    async with serve(CFG) as srv:
        async with ShardedClient(srv.url, processes=processes, max_connections=concurrency, timeout_s=30) as client:
            before = time.perf_counter_ns()
            run = await client.run_level(specs, concurrency, warmup=warmup, **kw)
            after = time.perf_counter_ns()
        return run, srv.stats, before, after


async def _single(concurrency: int, specs: list[RequestSpec], warmup: list[RequestSpec]) -> LevelRun:
    async with serve(CFG) as srv, StreamingClient(srv.url, max_connections=concurrency) as client:
        await client.warm_connections(concurrency)
        return await run_level(client, specs, concurrency, warmup=warmup)


def test_the_clock_is_one_for_every_process() -> None:
    assert shared_clock() is None  # Linux: perf_counter_ns is CLOCK_MONOTONIC, system-wide


def test_concurrency_and_requests_are_split_in_proportion() -> None:
    assert split_concurrency(10, 3) == [4, 3, 3]
    assert split_concurrency(2, 4) == [1, 1]  # a shard without a worker is left out
    shares = split_requests(20, [4, 3, 3])
    assert sorted(i for s in shares for i in s) == list(range(20))  # every request once
    assert [len(s) for s in shares] == [8, 6, 6]
    assert shares[0][:4] == [0, 1, 2, 3] and shares[1][:3] == [4, 5, 6]


def test_every_request_is_accounted_for_on_one_clock(arun: Runner) -> None:
    specs, warmup = _specs(30, start=6), _specs(6)
    run, stats, before, after = arun(_sharded(3, 6, specs, warmup))
    assert len(run.results) == 30 and len(run.warmup_results) == 6
    assert all(r.ok for r in [*run.results, *run.warmup_results])
    assert stats.requests == 36  # the server saw each request once
    assert stats.max_in_flight == 6  # the shards together never exceeded C, and reached it
    assert sum(r.output_tokens or 0 for r in run.results) == 30 * 12
    # one time base: every shard's timestamps fall inside the parent's own clock readings around the level
    for r in [*run.results, *run.warmup_results]:
        assert r.t_first_ns is not None and r.t_last_ns is not None and r.t_done_ns is not None
        assert before <= r.t_sent_ns <= r.t_first_ns <= r.t_last_ns <= r.t_done_ns <= after
        assert r.chunk_times_ns == sorted(r.chunk_times_ns)
    # warm-up is over on every shard before the first measured request leaves any shard
    assert max(r.t_done_ns or 0 for r in run.warmup_results) <= min(r.t_sent_ns for r in run.results)
    assert run.window_start_ns == min(r.t_sent_ns for r in run.results)
    assert run.window_end_ns == max(r.t_done_ns or 0 for r in run.results)


def test_figures_equal_a_single_process_run(arun: Runner) -> None:
    truth = expected_timing(CFG, 12)
    specs, warmup = _specs(24, start=4), _specs(4)
    sharded, _, _, _ = arun(_sharded(2, 4, specs, warmup))
    single = arun(_single(4, specs, warmup))

    def ttft(run: LevelRun) -> float:
        return statistics.median((r.t_first_ns or 0) - r.t_sent_ns for r in run.results) / 1e6

    def e2e(run: LevelRun) -> float:
        return statistics.median((r.t_last_ns or 0) - r.t_sent_ns for r in run.results) / 1e6

    # both measure the server's known timing (never less; more by the transport and, on a busy 2-core
    # machine, the scheduler) and agree with each other
    for run in (sharded, single):
        assert truth.ttft_ms <= ttft(run) < truth.ttft_ms + 10
        assert truth.e2e_ms <= e2e(run) < truth.e2e_ms + 10
    assert abs(ttft(sharded) - ttft(single)) < 6
    assert abs(e2e(sharded) - e2e(single)) < 6
    # the level's duration: 24 requests, 4 at a time, about 6 rounds of one request's E2E each
    assert abs(sharded.window_ns - single.window_ns) / single.window_ns < 0.25


def test_an_abort_reaches_every_shard(arun: Runner) -> None:
    seen: list[int] = []

    def should_abort() -> str | None:
        return "enough" if len(seen) >= 5 else None

    specs = _specs(60)
    run, _, _, _ = arun(_sharded(2, 4, specs, [], on_result=lambda r: seen.append(1), should_abort=should_abort))
    assert run.aborted == "enough"
    assert 5 <= len(run.results) < 60  # stopped early, and what was in flight is kept
    cancelled = [r for r in run.results if r.error_kind == "cancelled"]
    assert all(not r.ok for r in cancelled)
    assert len(seen) == len(run.results) - len(cancelled)  # on_result saw every finished request once


def test_one_process_or_fewer_is_refused_below_one() -> None:
    with pytest.raises(ValueError, match="processes must be >= 1"):
        ShardedClient("http://127.0.0.1:1", processes=0, max_connections=1)


def test_every_token_is_received_after_the_server_sent_it(arun: Runner) -> None:
    """Each request asks for its own number of tokens (ignore_eos), so the server's stream log names it: every
    shard's receipt time of token k is on the server's clock, after the server wrote token k, and close to it."""
    warmup = [RequestSpec(prompt=f"w{i}", max_tokens=40 + i, ignore_eos=True, api="completions") for i in range(6)]
    specs = [RequestSpec(prompt=f"r{i}", max_tokens=5 + i, ignore_eos=True, api="completions") for i in range(24)]
    run, stats, _, _ = arun(_sharded(3, 6, specs, warmup))
    streams = {sum(s.chunk_tokens): s for s in stats.streams}
    assert len(streams) == len(stats.streams) == 30  # every request reached the server once
    for r in [*run.warmup_results, *run.results]:
        assert r.ok and r.output_tokens is not None
        sent = streams.pop(r.output_tokens)  # the server's log of this very request
        assert r.t_sent_ns <= sent.t0_ns  # sent before the server read it
        assert len(r.chunk_times_ns) == len(sent.emit_ns) == r.output_tokens  # one token per chunk
        lags = [got - emitted for got, emitted in zip(r.chunk_times_ns, sent.emit_ns, strict=True)]
        assert min(lags) >= 0  # never received before it was sent: one clock base
        assert max(lags) < 500e6  # and received soon after (a busy 2-core machine: 500 ms)
    assert not streams
    # results in the specs' order, as one process gives them (benchmarks match receipts to sends by it)
    assert [r.output_tokens for r in run.warmup_results] == [40 + i for i in range(6)]
    assert [r.output_tokens for r in run.results] == [5 + i for i in range(24)]
    # the pooled counts are the server's: tokens it sent for the measured requests = the level's total
    assert sum(r.output_tokens or 0 for r in run.results) == sum(5 + i for i in range(24))
    assert stats.chunks == sum(5 + i for i in range(24)) + sum(40 + i for i in range(6))


def test_warm_up_ends_on_every_shard_before_any_measured_request_reaches_the_server(arun: Runner) -> None:
    # warm-up requests are long (40+ tokens at 4 ms), measured ones short: a shard that started measuring while
    # another still warmed up would show a measured stream beginning before a warm-up stream's last token
    warmup = [RequestSpec(prompt=f"w{i}", max_tokens=40 + i, ignore_eos=True, api="completions") for i in range(8)]
    specs = [RequestSpec(prompt=f"r{i}", max_tokens=2 + i % 3, ignore_eos=True, api="completions") for i in range(8)]
    _, stats, _, _ = arun(_sharded(4, 4, specs, warmup))
    warm = [s for s in stats.streams if sum(s.chunk_tokens) >= 40]
    measured = [s for s in stats.streams if sum(s.chunk_tokens) < 40]
    assert len(warm) == 8 and len(measured) == 8
    assert max(s.emit_ns[-1] for s in warm) < min(s.t0_ns for s in measured)


async def _crash_one_shard(after: int) -> tuple[LevelRun, int]:
    async with serve(CFG) as srv, ShardedClient(srv.url, processes=2, max_connections=4, timeout_s=30) as client:
        seen: list[RequestResult] = []

        def on_result(result: RequestResult) -> None:
            seen.append(result)
            if len(seen) == after:
                client._procs[1].kill()  # a shard dies mid-level (as an out-of-memory kill would)

        run = await client.run_level(_specs(80), 4, on_result=on_result)
        return run, len(seen)


def test_a_shard_that_dies_fails_the_level(arun: Runner) -> None:
    run, seen = arun(_crash_one_shard(after=6))
    assert run.aborted == "client process 1 exited"
    assert 6 <= len(run.results) < 80  # the other shard stopped too, and what it had finished is kept
    assert seen == len([r for r in run.results if r.error_kind != "cancelled"])


def test_bench_run_with_client_processes_writes_one_record_that_says_so(tmp_path: Path, tiny_prompts: Path) -> None:
    prompts = tiny_prompts
    config = {
        "experiment": "shards-test", "variant": "two", "engine": "testserver", "prompt_set": str(prompts),
        "server_args": {"ttft-ms": 20, "itl-ms": 2, "output-tokens": 10},
        "levels": [1, 4], "requests_per_level": "3x", "min_requests": 3, "warmup": "1x", "max_tokens": 10,
        "records_dir": str(tmp_path / "records"),
    }  # fmt: skip
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "run", str(tmp_path / "run.yaml"), "--client-processes", "3",
         "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sorted((tmp_path / "records").rglob("*.json"))
    assert len(files) == 1  # one record, however many client processes
    record = load_record(files[0]).record
    assert record.status.state == "complete"
    for level, requests, processes in zip(record.levels, (3, 12), (1, 3), strict=True):
        assert level.requests_completed == requests and level.requests_failed == 0
        assert level.output_tokens is not None and level.output_tokens.total == requests * 10
        assert level.client is not None and level.client.processes == processes  # C=1: one process measured it
        assert level.client.event_loop == chosen_loop()  # the shards' loop, as this environment chooses it
        assert level.client.token_events == (requests + requests // 3) * 10  # warm-up included, every shard


async def _orphan() -> tuple[int | None, int]:
    async with serve(CFG) as srv:
        client = ShardedClient(srv.url, processes=1, max_connections=2, timeout_s=30)
        conn, proc = client._conns[0], client._procs[0]
        conn.send(("phase", _specs(200), 2))  # 100 rounds of ~75 ms: ~7.5 s of work
        while srv.stats.requests < 4:  # the level is under way
            await asyncio.sleep(0.01)
        conn.close()  # as if the parent had died mid-level
        try:
            code = await asyncio.get_running_loop().run_in_executor(None, proc.wait, 20)
        finally:
            await client.aclose()
        return code, srv.stats.requests


def test_a_shard_whose_parent_is_gone_stops(arun: Runner) -> None:
    code, requests = arun(_orphan())
    assert code == 0  # no traceback exit, no orphan left serving
    assert requests < 100  # it stopped its level instead of finishing it
