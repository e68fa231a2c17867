"""The sharded client (several client processes, one level) against the in-process known-timing test server."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from bench.runner.client import RequestSpec, StreamingClient
from bench.runner.load import LevelRun, run_level
from bench.runner.shards import ShardedClient, shared_clock, split_concurrency, split_requests
from bench.testserver import ServerStats, TestServerConfig, expected_timing, serve

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
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
    assert [r.t_sent_ns for r in run.results] == sorted(r.t_sent_ns for r in run.results)
    assert run.window_start_ns == run.results[0].t_sent_ns
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
