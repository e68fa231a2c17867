"""The fixed-concurrency load generator against the in-process test server."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from bench.runner.client import StreamingClient
from bench.runner.load_generator import LevelRun, run_level
from bench.runner.metrics import summarize_level
from bench.runner.request import RequestResult, RequestSpec
from bench.testing.testserver import ServerStats, TestServerConfig, serve

Runner = Callable[[Coroutine[Any, Any, Any]], Any]


def _specs(n: int, max_tokens: int = 4, **extra: Any) -> list[RequestSpec]:
    return [RequestSpec(prompt=f"prompt {i}", max_tokens=max_tokens, extra_body=extra) for i in range(n)]


async def _level(
    cfg: TestServerConfig, specs: list[RequestSpec], concurrency: int, **kw: Any
) -> tuple[LevelRun, ServerStats]:
    async with serve(cfg) as srv, StreamingClient(srv.url, max_connections=concurrency) as client:
        await client.warm_connections(concurrency)
        run = await run_level(client, specs, concurrency, **kw)
        return run, srv.stats


@pytest.mark.parametrize("concurrency", [1, 3, 8, 20])
def test_exactly_n_requests_in_flight(arun: Runner, concurrency: int) -> None:
    cfg = TestServerConfig(ttft_ms=40, itl_ms=3, output_tokens=4)
    run, stats = arun(_level(cfg, _specs(3 * concurrency), concurrency))
    assert stats.max_in_flight == concurrency  # never more, and it did reach N
    assert stats.requests == 3 * concurrency
    assert len(run.results) == 3 * concurrency and all(r.ok for r in run.results)
    # a client-side check too: at the moment each request was sent, at most N were outstanding
    for r in run.results:
        outstanding = sum(1 for o in run.results if o.t_sent_ns <= r.t_sent_ns < (o.t_done_ns or 0))
        assert outstanding <= concurrency


def test_warmup_runs_first_and_stays_outside_the_window(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=10, itl_ms=2, output_tokens=3)
    warm = _specs(4, max_tokens=2)
    run, stats = arun(_level(cfg, _specs(6), 2, warmup=warm))
    assert len(run.warmup_results) == 4 and len(run.results) == 6
    assert stats.requests == 10
    assert max(r.t_done_ns or 0 for r in run.warmup_results) <= run.window_start_ns
    assert run.window_start_ns == min(r.t_sent_ns for r in run.results)
    assert run.window_end_ns == max(r.t_done_ns or 0 for r in run.results)
    lv = summarize_level(run)
    assert lv.warmup_requests == 4 and lv.requests_sent == 6
    assert lv.output_tokens is not None and lv.output_tokens.total == 6 * 3  # warm-up tokens not counted


def test_on_result_sees_every_result(arun: Runner) -> None:
    seen: list[RequestResult] = []
    cfg = TestServerConfig(ttft_ms=2, itl_ms=1, output_tokens=2)
    run, _ = arun(_level(cfg, _specs(5), 2, warmup=_specs(2), on_result=seen.append))
    assert len(seen) == 7 and {id(r) for r in seen} == {id(r) for r in run.results + run.warmup_results}


def test_abort_stops_new_requests_and_cancels_in_flight(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=5, itl_ms=1, output_tokens=2)
    failures: list[RequestResult] = []

    def on_result(result: RequestResult) -> None:
        if not result.ok:
            failures.append(result)

    def should_abort() -> str | None:
        return "3 consecutive HTTP 5xx" if len(failures) >= 3 else None

    fail = RequestSpec(prompt="x", max_tokens=2, extra_body={"benchbook_test": {"fail_status": 500}})
    slow_ms = 2000
    slow = RequestSpec(prompt="x", max_tokens=2, extra_body={"benchbook_test": {"ttft_ms": slow_ms}})
    # two workers: both fail at once, one takes the slow request, the other the third failure -> abort
    specs = [fail, fail, slow, fail, *_specs(20)]
    run, stats = arun(_level(cfg, specs, 2, on_result=on_result, should_abort=should_abort))
    assert run.aborted == "3 consecutive HTTP 5xx"
    assert stats.requests == 4  # nothing started after the abort
    assert [r.error_kind for r in run.results] == ["http_5xx", "http_5xx", "cancelled", "http_5xx"]
    assert run.window_ns < 0.5 * slow_ms * 1e6  # the slow request was not waited for
    lv = summarize_level(run)
    assert lv.errors is not None and lv.errors.flagged and lv.errors.by_kind.get("cancelled", 0) >= 1


def test_abort_during_warmup(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=1, itl_ms=1, output_tokens=2, fail_status=503)
    run, stats = arun(_level(cfg, _specs(5), 1, warmup=_specs(3), should_abort=lambda: "server down"))
    assert run.aborted == "during warm-up: server down" and run.results == [] and stats.requests == 1


def test_bad_spec_fails_before_any_request(arun: Runner) -> None:
    bad = RequestSpec(prompt=[{"role": "user", "content": "x"}], max_tokens=2, api="generate")
    with pytest.raises(ValueError, match="generate"):
        arun(_level(TestServerConfig(), [*_specs(2), bad], 2))

    async def zero() -> None:
        async with StreamingClient("http://127.0.0.1:9", max_connections=1) as client:
            await run_level(client, _specs(1), 0)

    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        arun(zero())


def test_more_workers_than_specs_and_no_specs(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=2, itl_ms=1, output_tokens=2)
    run, stats = arun(_level(cfg, _specs(2), 16))
    assert len(run.results) == 2 and stats.max_in_flight == 2
    empty, _ = arun(_level(cfg, [], 4))
    assert empty.results == [] and empty.window_ns == 0 and empty.aborted is None
