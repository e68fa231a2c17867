"""A concurrency sweep that writes one record, level by level, and never loses a finished level.

The record file is created (exclusively) before anything else happens, with status ``partial``; after
every finished level it is atomically replaced; at the end its status is final (:mod:`bench.runner._outcome`):
``complete`` only when every level ran and none failed its error threshold. A server that dies (process exit,
connection refused, repeated 5xx, broken streams, timeouts) or Ctrl-C stops the sweep: the finished levels stay
(a level cut short is kept as a failed level when it had sent requests), the status is ``partial`` (some valid
levels) or ``failed`` (none), the message names the cause and ``log_excerpt`` carries the server log's tail
(crash lines such as ``GGML_ASSERT`` included). A write that fails (disk full) never touches the file's last
good version: the sweep stops and :class:`SweepState` keeps the error.

Pure parts (the plan, the request specs, record updates) are separate from the I/O loop in :func:`run_sweep`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from bench import __version__
from bench.record.model import (
    Benchbook,
    ClientLoad,
    Environment,
    Level,
    ModelRef,
    Provenance,
    Record,
    Server,
    Speculative,
    Status,
    Workload,
)
from bench.record.store import create_record_file, record_path, replace_record_file

from ._outcome import AbortPolicy, finish_record, stopped_level
from ._workload import cache_policy, prefix_marker, with_marker
from .client import StreamingClient
from .config import RunConfig
from .event_loop import running_loop
from .launcher import crash_cause, deferred_signals
from .load_generator import LevelRun, run_level
from .metrics import summarize_level
from .prompts import PromptSet
from .request import RequestResult, RequestSpec
from .shards import ShardedClient

__all__ = [
    "AbortPolicy",
    "LevelPlan",
    "RecordWriteError",
    "SweepState",
    "create",
    "finish_record",
    "initial_record",
    "make_plan",
    "make_specs",
    "now_utc",
    "run_sweep",
    "with_level",
]


class _Server(Protocol):
    def is_alive(self) -> bool: ...

    def exit_description(self) -> str: ...

    def tail(self, lines: int = 40) -> str: ...


@dataclass(frozen=True)
class LevelPlan:
    concurrency: int
    requests: int
    warmup: int


def make_plan(cfg: RunConfig) -> list[LevelPlan]:
    return [LevelPlan(c, cfg.requests_for(c), cfg.warmup_for(c)) for c in cfg.levels]


def make_specs(
    prompt_set: PromptSet,
    count: int,
    cfg: RunConfig,
    *,
    offset: int = 0,
    extra_body: dict[str, Any] | None = None,
    nonce: str = "",
) -> list[RequestSpec]:
    """``count`` requests cycling through the prompt set from ``offset`` (so warm-up and measured requests
    of a level, and successive levels, start at different prompts but cover the set evenly).

    With ``cfg.prefix == "unique"`` request ``offset + i`` opens with ``prefix_marker(nonce, offset + i)``: pass
    the run's record id as ``nonce`` and a running offset, so that no two requests of a run, nor of two runs,
    share a prefix."""
    prompts = list(prompt_set.prompts)
    if not prompts:
        raise ValueError(f"prompt set {prompt_set.name!r} has no prompts")

    def payload(i: int) -> str | list[dict[str, str]]:
        prompt = prompts[(offset + i) % len(prompts)]
        raw = prompt.chat() if cfg.api == "chat" else prompt.text
        return with_marker(raw, prefix_marker(nonce, offset + i)) if cfg.prefix == "unique" else raw

    return [
        RequestSpec(
            prompt=payload(i),
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            ignore_eos=cfg.ignore_eos,
            seed=cfg.seed,
            api=cfg.api,
            model=cfg.model.name if cfg.engine == "openai" else None,
            extra_body=dict(extra_body or {}),
        )
        for i in range(count)
    ]


def initial_record(
    *,
    cfg: RunConfig,
    record_id: str,
    created_at: datetime,
    prompt_set: PromptSet,
    server: Server,
    model: ModelRef,
    speculative: Speculative | None,
    environment: Environment,
    benchbook: Benchbook,
    test_server: bool,
) -> Record:
    plan = make_plan(cfg)
    uniform = {p.requests for p in plan}
    warm = {p.warmup for p in plan}
    draft = None
    if cfg.draft_model is not None:
        d = cfg.draft_model
        draft = ModelRef(name=d.name, path=d.path, revision=d.revision, quantization=d.quantization)
    return Record(
        id=record_id,
        experiment=cfg.experiment,
        variant=cfg.variant,
        title=cfg.title,
        description=cfg.description,
        created_at=created_at,
        provenance=Provenance(
            kind="measured", tool=f"benchbook {__version__}", measured_at=created_at, test_server=test_server
        ),
        benchbook=benchbook,
        server=server,
        model=model,
        draft_model=draft,
        speculative=speculative,
        environment=environment,
        workload=Workload(
            prompt_set=prompt_set.name,
            prompt_set_hash=prompt_set.content_hash,
            prompt_set_description=prompt_set.description,
            num_prompts=len(prompt_set.prompts),
            api=cfg.api,
            requests_per_level=uniform.pop() if len(uniform) == 1 else None,
            warmup_requests=warm.pop() if len(warm) == 1 else None,
            planned_levels=list(cfg.levels),
            concurrency_range=(cfg.levels[0], cfg.levels[-1]),
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            ignore_eos=cfg.ignore_eos,
            seed=cfg.seed,
            prefix=cfg.prefix,
            cache_policy=cache_policy(server.engine, server.args, server.server_info),
            request_timeout_s=cfg.request_timeout_s,
            error_threshold=cfg.error_threshold,
        ),
        levels=[],
        status=Status(state="partial", message="running: no level finished yet"),
        tags=list(cfg.tags),
        run_group=cfg.run_group,
    )


def _revalidate(record: Record, **update: Any) -> Record:
    data = record.model_dump()
    data.update(update)
    return Record.model_validate(data)


def with_level(record: Record, level: Level, *, running: bool = True) -> Record:
    levels = [*record.levels, level]
    status = Status(state="partial", message=f"running: {len(levels)} level(s) finished") if running else record.status
    return _revalidate(record, levels=[lv.model_dump() for lv in levels], status=status.model_dump())


class RecordWriteError(OSError):
    """The record file could not be written (disk full, folder gone read-only). The file on disk is untouched:
    it keeps its last good version, ``kept``."""

    def __init__(self, path: Path, cause: OSError, kept: Record | None) -> None:
        self.path, self.cause, self.kept = path, cause, kept
        what = "nothing was written"
        if kept is not None:
            what = f"the file keeps its last good version ({len(kept.levels)} level(s), status {kept.status.state})"
        self.message = f"cannot write the record {path}: {cause.strerror or cause}; {what}"
        super().__init__(cause.errno, self.message)

    def __str__(self) -> str:
        return self.message


@dataclass
class SweepState:
    """What the sweep has written so far; kept outside the event loop so Ctrl-C can still finish the file.

    ``record`` is always what the file holds. When a write fails, ``write_error`` keeps the error and
    ``unwritten`` the record that could not be written (its status says why the run stopped)."""

    path: Path
    record: Record
    current_level: int | None = None
    finished: bool = False
    levels_done: list[int] = field(default_factory=list)
    write_error: RecordWriteError | None = None
    unwritten: Record | None = None

    def write(self, record: Record) -> None:
        with deferred_signals():  # a Ctrl-C arrives once the file and self.record agree, never halfway
            try:
                replace_record_file(self.path, record)
            except OSError as exc:
                self.write_error, self.unwritten = RecordWriteError(self.path, exc, self.record), record
                raise self.write_error from exc
            self.record = record

    def fail(self, message: str, log_excerpt: str | None = None) -> Record:
        """Finish the record with a failure status; a failing write is kept in ``write_error``, never raised."""
        rec = finish_record(self.record, error=message, log_excerpt=log_excerpt, failed_level=self.current_level)
        self.finished = True
        with contextlib.suppress(RecordWriteError):
            self.write(rec)
        return rec


def create(root: Path, record: Record) -> SweepState:
    """Claim the record file (exclusive create) with status partial."""
    try:
        return SweepState(path=create_record_file(root, record), record=record)
    except FileExistsError:
        raise
    except OSError as exc:
        raise RecordWriteError(record_path(root, record), exc, None) from exc


class _Progress(Protocol):
    def start_level(self, concurrency: int, requests: int, warmup: int) -> None: ...

    def on_result(self, result: RequestResult) -> None: ...

    def end_level(self, level: Level | None) -> None: ...


async def run_sweep(
    state: SweepState,
    cfg: RunConfig,
    prompt_set: PromptSet,
    *,
    base_url: str,
    server: _Server | None = None,
    progress: _Progress | None = None,
    extra_body: dict[str, Any] | None = None,
    speculative_method: str | None = None,
    client_factory: Callable[[str, int], StreamingClient | ShardedClient] | None = None,
) -> Record:
    """Run every planned level against ``base_url``, updating the record file after each one. With
    ``cfg.client_processes`` > 1 each level is spread over that many client processes (one record)."""
    plan = make_plan(cfg)
    factory = client_factory or (lambda url, n: default_client(cfg, url, n))
    client = factory(base_url, max(p.concurrency for p in plan))
    policy = AbortPolicy(server=server)  # one per run: a server that is gone stays gone across levels
    offset = 0
    nonce = state.record.id
    server_facts = state.record.server
    info = {**(server_facts.observed.extra if server_facts.observed else {}), **(server_facts.server_info or {})}
    policy_now = cache_policy(server_facts.engine, server_facts.args, info)
    if policy_now != state.record.workload.cache_policy:  # the server's own info arrived after the record was made
        workload = {**state.record.workload.model_dump(), "cache_policy": policy_now}
        state.write(Record.model_validate({**state.record.model_dump(), "workload": workload}))
    try:
        for step in plan:
            state.current_level = step.concurrency
            reason = policy()
            if reason is not None:
                return _aborted(state, f"before level C={step.concurrency}: {reason}", server)
            warm = make_specs(prompt_set, step.warmup, cfg, offset=offset, extra_body=extra_body, nonce=nonce)
            specs = make_specs(
                prompt_set, step.requests, cfg, offset=offset + step.warmup, extra_body=extra_body, nonce=nonce
            )
            offset += step.warmup + step.requests
            if progress is not None:
                progress.start_level(step.concurrency, step.requests, step.warmup)

            def on_result(result: RequestResult) -> None:
                policy.observe(result)
                if progress is not None:
                    progress.on_result(result)

            run, wall_s, cpu_s = await _level(client, specs, step.concurrency, warm, on_result, policy)
            processes = client.processes_for(step.concurrency) if isinstance(client, ShardedClient) else 1
            loop = client.event_loop if isinstance(client, ShardedClient) else running_loop()
            load = client_load(run, wall_s, cpu_s).model_copy(update={"processes": processes, "event_loop": loop})
            if server is not None and any(not r.ok for r in run.results) and server.is_alive():
                await _settle(server)  # a crash shows as failed requests first, as a process exit a moment later
            # a server that died while requests failed is the reason, even where the failures (connection refused,
            # reset: microseconds each) stopped the level, or ended it, before the process exit could be seen
            died = server is not None and not server.is_alive() and any(not r.ok for r in run.results)
            reason = policy() if died else run.aborted or policy()
            level = summarize_level(run, error_threshold=cfg.error_threshold, speculative_method=speculative_method)
            level = level.model_copy(update={"client": load})
            if reason is not None:
                whole = not died and (run.aborted is None or (len(run.results) == len(specs) and not _cancelled(run)))
                if progress is not None:
                    progress.end_level(level if whole else None)
                where = f"{'after' if whole else 'during'} level C={step.concurrency}"
                if run.results:  # measured requests were sent: keep them (a level cut short is failed)
                    level = level if whole else stopped_level(level, reason)
                    try:
                        state.write(with_level(state.record, level))
                    except RecordWriteError as exc:
                        return state.fail(f"stopped {where}: {reason}; {exc}")
                return _aborted(state, f"stopped {where}: {reason}", server)
            try:
                state.write(with_level(state.record, level))
            except RecordWriteError as exc:
                return state.fail(f"stopped after level C={step.concurrency}: {exc}")
            state.levels_done.append(step.concurrency)
            if progress is not None:
                progress.end_level(level)
        state.current_level = None
        return _finish(state)
    finally:
        await client.aclose()


def default_client(cfg: RunConfig, url: str, max_connections: int) -> StreamingClient | ShardedClient:
    """The run's client: one process, or ``cfg.client_processes`` of them (:class:`ShardedClient`)."""
    if cfg.client_processes > 1:
        return ShardedClient(
            url, processes=cfg.client_processes, max_connections=max_connections, timeout_s=cfg.request_timeout_s
        )
    return StreamingClient(url, max_connections=max_connections, timeout_s=cfg.request_timeout_s)


async def _level(
    client: StreamingClient | ShardedClient,
    specs: list[RequestSpec],
    concurrency: int,
    warm: list[RequestSpec],
    on_result: Callable[[RequestResult], None],
    policy: Callable[[], str | None],
) -> tuple[LevelRun, float, float]:
    """One level; with it the client's wall and CPU seconds (every client process's, for the sharded client)."""
    if isinstance(client, ShardedClient):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        run = await client.run_level(specs, concurrency, warmup=warm, on_result=on_result, should_abort=policy)
        return run, time.perf_counter() - wall0, time.process_time() - cpu0 + client.last_cpu_s
    await client.warm_connections(concurrency)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run = await run_level(client, specs, concurrency, warmup=warm, on_result=on_result, should_abort=policy)
    return run, time.perf_counter() - wall0, time.process_time() - cpu0


def _cancelled(run: LevelRun) -> bool:
    return any(r.error_kind == "cancelled" for r in run.results)


def _finish(state: SweepState) -> Record:
    state.finished = True
    with contextlib.suppress(RecordWriteError):  # state.write_error says so; the file keeps every level
        state.write(finish_record(state.record))
    return state.record


def client_load(run: LevelRun, wall_s: float, cpu_s: float) -> ClientLoad:
    """The client's own CPU use and token-event rate over a level (warm-up included)."""
    events = sum(len(r.chunk_times_ns) for r in (*run.warmup_results, *run.results))
    wall = max(wall_s, 1e-9)
    return ClientLoad(
        wall_s=round(wall_s, 4),
        cpu_s=round(cpu_s, 4),
        cpu_percent=round(100.0 * cpu_s / wall, 1),
        token_events=events,
        token_events_per_s=round(events / wall, 1),
    )


async def _settle(server: _Server, timeout_s: float = 2.0, interval_s: float = 0.05) -> None:
    for _ in range(int(timeout_s / interval_s)):
        if not server.is_alive():
            return
        await asyncio.sleep(interval_s)


def _aborted(state: SweepState, reason: str, server: _Server | None) -> Record:
    if server is not None and not server.is_alive() and "server process" not in reason:
        reason += f"; the server process {server.exit_description()}"
    excerpt = server.tail() if server is not None else None
    cause = crash_cause(excerpt)
    if cause is not None:
        reason += f"; server log: {cause}"
    return state.fail(reason, excerpt)


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
