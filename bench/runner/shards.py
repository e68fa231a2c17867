"""The sharded client: one fixed-concurrency level spread over several client processes, feeding one record.

One Python process reads streams on one core; a fast server on a many-core host outruns it. A
:class:`ShardedClient` starts ``processes`` worker processes (``python -m bench.runner.shards FD``: a fresh
interpreter each, nothing forked from the parent's event loop, the parent's ``__main__`` never re-imported;
messages are pickled over a socket pair), each with its own event loop and
:class:`~bench.runner.client.StreamingClient`.
A level's concurrency ``C`` is split as evenly as it goes (shard ``i`` gets ``C // N`` workers, one more for the
first ``C % N``), and its requests follow in proportion, request ``j`` to shard ``j``'s turn in a repeating cycle
of those weights, so every shard sends its share of the prompt set.

Timestamps stay on one clock base: every process takes them with ``time.perf_counter_ns``, which on Linux is
``clock_gettime(CLOCK_MONOTONIC)``, one clock for the whole machine (unlike ``CLOCK_PROCESS_CPUTIME_ID`` or a
per-process origin), so a timestamp of one shard can be subtracted from another's. :func:`shared_clock` checks
this at start and refuses to shard where it does not hold.

Warm-up and measured requests are two phases: every shard finishes its warm-up before any sends a measured
request, so the measured window (first measured request sent -> last measured response finished, over all
shards) holds measured traffic only, as in a single process. Each result comes back to the parent as it
finishes (``on_result``, ``should_abort`` see it); an abort reaches every shard, which cancels what it has in
flight, as :func:`~bench.runner.load_generator.run_level` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing.connection
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .client import StreamingClient
from .event_loop import chosen_loop, run, watch_readable
from .load_generator import LevelRun, run_level
from .request import RequestResult, RequestSpec, build_request

__all__ = ["ShardedClient", "shared_clock", "split_concurrency", "split_requests"]


def shared_clock() -> str | None:
    """None when ``perf_counter_ns`` is one system-wide monotonic clock, else why it is not."""
    info = time.get_clock_info("perf_counter")
    if "CLOCK_MONOTONIC" in info.implementation and "RAW" not in info.implementation:
        return None
    return (
        f"perf_counter is {info.implementation} here, not clock_gettime(CLOCK_MONOTONIC): timestamps of two client "
        "processes would not share one base; use one client process"
    )


def split_concurrency(concurrency: int, processes: int) -> list[int]:
    """Workers per shard: as even as it goes, shards without a worker left out."""
    base, extra = divmod(concurrency, processes)
    return [n for n in (base + (1 if i < extra else 0) for i in range(processes)) if n > 0]


def split_requests(count: int, weights: Sequence[int]) -> list[list[int]]:
    """Indices ``0..count-1`` over shards in proportion to ``weights``: a repeating cycle in which shard ``i``
    takes ``weights[i]`` consecutive turns."""
    cycle = [i for i, w in enumerate(weights) for _ in range(w)]
    shares: list[list[int]] = [[] for _ in weights]
    for j in range(count):
        shares[cycle[j % len(cycle)]].append(j)
    return shares


@dataclass(frozen=True)
class _Options:
    base_url: str
    max_connections: int
    timeout_s: float
    headers: dict[str, str]
    continuous_usage: bool
    keepalive_expiry_s: float
    event_loop: str = "asyncio"


# -- the worker process ------------------------------------------------------------------------------------------


def _worker(conn: multiprocessing.connection.Connection, options: _Options) -> None:  # in the worker process
    """A shard: run phases on request until told to stop. Messages in: ("phase", specs, concurrency),
    ("abort", reason), ("stop",). Out: ("result", RequestResult) as each finishes (on_result's order; the
    ones cancelled in flight last), ("done", aborted, cpu_s, order), ("error", text); ``order[k]`` is the
    position among this phase's "result" messages of the result of the phase's spec ``k``."""
    run(_serve(conn, options), loop=options.event_loop)


async def _serve(conn: multiprocessing.connection.Connection, options: _Options) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
    abort: list[str] = []

    def readable() -> None:
        try:
            while conn.poll():
                message = conn.recv()
                if message[0] == "abort":
                    abort.append(message[1])
                else:
                    inbox.put_nowait(message)
        except (EOFError, OSError):  # the parent is gone: stop what is in flight, then exit
            abort.append("the parent process is gone")
            inbox.put_nowait(("stop",))
            loop.remove_reader(conn.fileno())

    def send(message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # the parent is gone; readable() stops this shard
            conn.send(message)

    watch_readable(loop, conn.fileno(), readable)
    client = StreamingClient(
        options.base_url,
        max_connections=options.max_connections,
        timeout_s=options.timeout_s,
        headers=options.headers,
        continuous_usage=options.continuous_usage,
        keepalive_expiry_s=options.keepalive_expiry_s,
    )
    try:
        while True:
            message = await inbox.get()
            if message[0] == "stop":
                return
            _, specs, concurrency = message
            abort.clear()
            try:
                await client.warm_connections(concurrency)
                reported: dict[int, int] = {}  # id(result) -> its position among the messages sent

                def on_result(result: RequestResult, reported: dict[int, int] = reported) -> None:
                    reported[id(result)] = len(reported)
                    send(("result", result))

                cpu0 = time.process_time()
                run = await run_level(
                    client, specs, concurrency, on_result=on_result, should_abort=lambda: abort[0] if abort else None
                )
                for result in run.results:  # cancelled in flight: never passed through on_result
                    if id(result) not in reported:
                        reported[id(result)] = len(reported)
                        send(("result", result))
                order = [reported[id(result)] for result in run.results]  # run.results: the specs' order
                send(("done", run.aborted, time.process_time() - cpu0, order))
            except Exception as exc:  # a bug, not a server problem: the parent stops the level and says so
                send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        with contextlib.suppress(ValueError, OSError):
            loop.remove_reader(conn.fileno())
        await client.aclose()


# -- the parent ------------------------------------------------------------------------------------------------


class ShardedClient:
    """``processes`` client processes behind one :meth:`run_level`; see the module docstring."""

    def __init__(
        self,
        base_url: str,
        *,
        processes: int,
        max_connections: int,
        timeout_s: float = 600.0,
        headers: dict[str, str] | None = None,
        continuous_usage: bool = True,
        keepalive_expiry_s: float = 600.0,
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        problem = shared_clock() if processes > 1 else None
        if problem is not None:
            raise RuntimeError(problem)
        self.processes = processes
        self.max_connections = max_connections
        self.base_url = base_url
        self.event_loop = chosen_loop()  # every shard runs on it (bench.runner.event_loop)
        self.last_cpu_s = 0.0  # CPU seconds of the shards during the last run_level (both phases)
        per_shard = max(split_concurrency(max_connections, processes))
        options = _Options(
            base_url, per_shard, timeout_s, dict(headers or {}), continuous_usage, keepalive_expiry_s, self.event_loop
        )
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self._conns: list[multiprocessing.connection.Connection] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        for _ in range(processes):
            parent, child = socket.socketpair()
            proc = subprocess.Popen(
                [sys.executable, "-m", "bench.runner.shards", str(child.fileno()), json.dumps(options.__dict__)],
                pass_fds=(child.fileno(),),
                env=env,
                stdin=subprocess.DEVNULL,
            )
            child.close()
            self._conns.append(multiprocessing.connection.Connection(parent.detach()))
            self._procs.append(proc)

    def processes_for(self, concurrency: int) -> int:
        """Client processes that take part in a level of ``concurrency`` (one worker each at least)."""
        return len(split_concurrency(concurrency, self.processes))

    async def __aenter__(self) -> ShardedClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError, EOFError):
                conn.send(("stop",))
        loop = asyncio.get_running_loop()
        for proc in self._procs:
            try:
                await loop.run_in_executor(None, proc.wait, 10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for conn in self._conns:
            conn.close()

    async def _phase(
        self,
        specs: Sequence[RequestSpec],
        concurrency: int,
        on_result: Callable[[RequestResult], None] | None,
        should_abort: Callable[[], str | None] | None,
    ) -> tuple[list[RequestResult], str | None, float]:
        weights = split_concurrency(concurrency, self.processes)
        shares = split_requests(len(specs), weights)
        active = [i for i, share in enumerate(shares) if share]
        for i in active:
            self._conns[i].send(("phase", [specs[j] for j in shares[i]], weights[i]))
        arrived: dict[int, list[RequestResult]] = {i: [] for i in active}
        placed: list[tuple[int, RequestResult]] = []  # (index into specs, result) of the shards that finished
        pending, aborted, cpu = set(active), None, 0.0
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        for i in active:
            watch_readable(loop, self._conns[i].fileno(), wake.set)
        try:
            while pending:
                await wake.wait()
                wake.clear()
                for i in list(pending):
                    conn = self._conns[i]
                    try:
                        while conn.poll():
                            message = conn.recv()
                            if message[0] == "result":
                                result = message[1]
                                arrived[i].append(result)
                                if on_result is not None and result.error_kind != "cancelled":
                                    on_result(result)
                                if should_abort is not None and aborted is None:
                                    reason = should_abort()
                                    if reason:
                                        aborted = reason
                                        self._abort(reason)
                            elif message[0] == "done":
                                pending.discard(i)
                                aborted = aborted or message[1]
                                cpu += message[2]
                                placed += [(shares[i][k], arrived[i][at]) for k, at in enumerate(message[3])]
                                arrived[i] = []
                                break
                            else:  # "error"
                                pending.discard(i)
                                aborted = aborted or f"client process {i} failed: {message[1]}"
                                self._abort(aborted)
                                break
                    except (EOFError, OSError):
                        pending.discard(i)
                        aborted = aborted or f"client process {i} exited"
                        self._abort(aborted)
        finally:
            for i in active:
                loop.remove_reader(self._conns[i].fileno())
        # the specs' order, as one process gives it; a shard that failed left what it had sent, in arrival order
        results = [r for _, r in sorted(placed, key=lambda x: x[0])]
        results += sorted((r for rs in arrived.values() for r in rs), key=lambda r: r.t_sent_ns)
        return results, aborted, cpu

    def _abort(self, reason: str) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError, EOFError):
                conn.send(("abort", reason))

    async def run_level(
        self,
        specs: Sequence[RequestSpec],
        concurrency: int,
        *,
        warmup: Sequence[RequestSpec] = (),
        on_result: Callable[[RequestResult], None] | None = None,
        should_abort: Callable[[], str | None] | None = None,
    ) -> LevelRun:
        """As :func:`bench.runner.load_generator.run_level`, over the shards; results in the specs' order (each
        shard sends its share in that order), those of a shard that failed last."""
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        for spec in (*warmup, *specs):
            build_request(spec)
        warm, aborted, cpu_warm = await self._phase(warmup, concurrency, on_result, should_abort)
        if aborted is not None:
            self.last_cpu_s = cpu_warm
            return LevelRun(concurrency, [], warm, 0, 0, f"during warm-up: {aborted}")
        results, aborted, cpu = await self._phase(specs, concurrency, on_result, should_abort)
        self.last_cpu_s = cpu_warm + cpu
        start = min((r.t_sent_ns for r in results), default=0)
        end = max((r.t_done_ns or r.t_sent_ns for r in results), default=0)
        return LevelRun(concurrency, results, warm, start, end, aborted)


def _main(argv: list[str]) -> int:
    fd, options = int(argv[0]), _Options(**json.loads(argv[1]))
    _worker(multiprocessing.connection.Connection(fd), options)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
