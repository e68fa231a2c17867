"""The load generator: a fixed-concurrency level (pure asyncio, all I/O through the shared client).

``concurrency`` workers share one queue of specs: each sends a request, waits for it to finish and sends the next,
so exactly ``concurrency`` requests are in flight until the queue is empty. Warm-up requests run first at the same
concurrency and finish before the first measured request is sent: the measured window (first measured request
sent -> last measured response finished) contains measured traffic only.

``on_result`` sees every result (warm-up included) and ``should_abort`` is polled after each; when it returns a
reason no new request starts, the requests in flight are cancelled and kept as ``error_kind="cancelled"`` results
(they were sent, so they count in the error rate).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter_ns

from .client import StreamingClient
from .request import RequestResult, RequestSpec, build_request

__all__ = ["LevelRun", "run_level"]


@dataclass
class LevelRun:
    concurrency: int
    results: list[RequestResult]  # measured requests only, in the order they were sent
    warmup_results: list[RequestResult]
    window_start_ns: int  # first measured request sent
    window_end_ns: int  # last measured response finished
    aborted: str | None  # why the level stopped early, if it did

    @property
    def window_ns(self) -> int:
        return max(0, self.window_end_ns - self.window_start_ns)


def _cancelled(t_sent_ns: int, reason: str) -> RequestResult:
    return RequestResult(
        ok=False,
        t_sent_ns=t_sent_ns,
        t_first_ns=None,
        t_last_ns=None,
        t_done_ns=perf_counter_ns(),
        chunk_times_ns=[],
        chunk_tokens=None,
        output_tokens=None,
        input_tokens=None,
        token_source="unknown",
        finish_reason=None,
        error_kind="cancelled",
        error=f"cancelled in flight: the level was aborted ({reason})",
    )


class _Phase:
    """One pass over a list of specs at a fixed concurrency."""

    def __init__(
        self,
        client: StreamingClient,
        specs: Sequence[RequestSpec],
        concurrency: int,
        on_result: Callable[[RequestResult], None] | None,
        should_abort: Callable[[], str | None] | None,
    ) -> None:
        self.client = client
        self.specs = specs
        self.concurrency = concurrency
        self.on_result = on_result
        self.should_abort = should_abort
        self.results: list[RequestResult | None] = [None] * len(specs)
        self.aborted: str | None = None
        self._next = 0
        self._tasks: list[asyncio.Task[None]] = []

    def _stop(self, reason: str) -> None:
        self.aborted = reason
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()

    async def _worker(self) -> None:
        while self.aborted is None and self._next < len(self.specs):
            index = self._next
            self._next += 1
            t_start = perf_counter_ns()
            try:
                result = await self.client.send(self.specs[index])
            except asyncio.CancelledError:
                self.results[index] = _cancelled(t_start, self.aborted or "cancelled")
                raise
            except BaseException:
                self._stop("internal error in the client")
                raise
            self.results[index] = result
            if self.on_result is not None:
                self.on_result(result)
            if self.should_abort is not None and self.aborted is None:
                reason = self.should_abort()
                if reason:
                    self._stop(reason)

    async def run(self) -> list[RequestResult]:
        workers = min(self.concurrency, len(self.specs))
        self._tasks = [asyncio.create_task(self._worker()) for _ in range(workers)]
        try:
            outcomes = await asyncio.gather(*self._tasks, return_exceptions=True)
        except asyncio.CancelledError:
            for task in self._tasks:
                task.cancel()
            raise
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
                raise outcome
        return [r for r in self.results if r is not None]


async def run_level(
    client: StreamingClient,
    specs: Sequence[RequestSpec],
    concurrency: int,
    *,
    warmup: Sequence[RequestSpec] = (),
    on_result: Callable[[RequestResult], None] | None = None,
    should_abort: Callable[[], str | None] | None = None,
) -> LevelRun:
    """Run ``warmup`` then ``specs`` at ``concurrency`` requests in flight; see the module docstring."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    for spec in (*warmup, *specs):
        build_request(spec)  # a malformed spec fails here, before any request is sent
    warm = _Phase(client, warmup, concurrency, on_result, should_abort)
    warmup_results = await warm.run()
    if warm.aborted is not None:
        return LevelRun(concurrency, [], warmup_results, 0, 0, f"during warm-up: {warm.aborted}")
    measured = _Phase(client, specs, concurrency, on_result, should_abort)
    results = await measured.run()
    start = min((r.t_sent_ns for r in results), default=0)
    end = max((r.t_done_ns or r.t_sent_ns for r in results), default=0)
    return LevelRun(concurrency, results, warmup_results, start, end, measured.aborted)
