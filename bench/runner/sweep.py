"""A concurrency sweep that writes one record, level by level, and never loses a finished level.

The record file is created (exclusively) before anything else happens, with status ``partial``; after
every finished level it is atomically replaced; at the end its status becomes ``complete``. A server that
dies (process exit, connection refused, repeated 5xx) or Ctrl-C stops the sweep: the finished levels stay,
the status is ``partial`` (some levels) or ``failed`` (none), the message names the cause and
``log_excerpt`` carries the server log's tail (crash lines such as ``GGML_ASSERT`` included).

Pure parts (the plan, the request specs, record updates) are separate from the I/O loop in :func:`run_sweep`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
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
from bench.record.store import create_record_file, replace_record_file

from .client import RequestResult, RequestSpec, StreamingClient
from .config import RunConfig
from .launcher import crash_cause
from .load import LevelRun, run_level
from .metrics import summarize_level
from .workload import cache_policy, prefix_marker, with_marker

__all__ = [
    "AbortPolicy",
    "LevelPlan",
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


class _Prompt(Protocol):
    @property
    def messages(self) -> Any: ...

    @property
    def text(self) -> str: ...


class _PromptSet(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str | None: ...

    @property
    def prompts(self) -> Sequence[Any]: ...

    @property
    def content_hash(self) -> str: ...


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


def _prompt_payload(prompt: Any, api: str) -> str | list[dict[str, str]]:
    if api == "chat":
        return [dict(m) for m in prompt.messages]
    return str(prompt.text)


def make_specs(
    prompt_set: _PromptSet,
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
        raw = _prompt_payload(prompts[(offset + i) % len(prompts)], cfg.api)
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
    prompt_set: _PromptSet,
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


def finish_record(
    record: Record,
    *,
    error: str | None = None,
    log_excerpt: str | None = None,
    failed_level: int | None = None,
    **update: Any,
) -> Record:
    """The final status: complete, or partial/failed with the cause (``update`` replaces other fields)."""
    if error is None:
        status = Status(state="complete", message=f"{len(record.levels)} level(s) measured")
    else:
        status = Status(
            state="partial" if record.levels else "failed",
            message=error,
            log_excerpt=log_excerpt or None,
            failed_level=failed_level,
        )
    return _revalidate(record, status=status.model_dump(), **update)


@dataclass
class AbortPolicy:
    """Decides when the server is gone: process exit, connection refused, or repeated 5xx / broken streams.

    ``observe`` sees every result; the policy itself (``__call__``) returns a reason or None.
    """

    server: _Server | None = None
    max_consecutive: int = 8
    _connect: int = 0
    _server_errors: int = 0
    last_error: str | None = None

    def observe(self, result: RequestResult) -> None:
        if result.ok:
            self._connect = self._server_errors = 0
            return
        self.last_error = result.error
        if result.error_kind == "connect":
            self._connect += 1
        elif result.error_kind in ("http_5xx", "stream_broken"):
            self._server_errors += 1

    def __call__(self) -> str | None:
        if self.server is not None and not self.server.is_alive():
            return f"the server process {self.server.exit_description()}"
        if self._connect >= self.max_consecutive:
            return f"{self._connect} consecutive connection failures (last: {self.last_error})"
        if self._server_errors >= self.max_consecutive:
            return f"{self._server_errors} consecutive server errors (last: {self.last_error})"
        return None


@dataclass
class SweepState:
    """What the sweep has written so far; kept outside the event loop so Ctrl-C can still finish the file."""

    path: Path
    record: Record
    current_level: int | None = None
    finished: bool = False
    levels_done: list[int] = field(default_factory=list)

    def write(self, record: Record) -> None:
        replace_record_file(self.path, record)
        self.record = record

    def fail(self, message: str, log_excerpt: str | None = None) -> Record:
        rec = finish_record(self.record, error=message, log_excerpt=log_excerpt, failed_level=self.current_level)
        self.write(rec)
        self.finished = True
        return rec


def create(root: Path, record: Record) -> SweepState:
    """Claim the record file (exclusive create) with status partial."""
    return SweepState(path=create_record_file(root, record), record=record)


class _Progress(Protocol):
    def start_level(self, concurrency: int, requests: int, warmup: int) -> None: ...

    def on_result(self, result: RequestResult) -> None: ...

    def end_level(self, level: Level | None) -> None: ...


async def run_sweep(
    state: SweepState,
    cfg: RunConfig,
    prompt_set: _PromptSet,
    *,
    base_url: str,
    server: _Server | None = None,
    progress: _Progress | None = None,
    extra_body: dict[str, Any] | None = None,
    speculative_method: str | None = None,
    client_factory: Callable[[str, int], StreamingClient] | None = None,
) -> Record:
    """Run every planned level against ``base_url``, updating the record file after each one."""
    plan = make_plan(cfg)
    factory = client_factory or (
        lambda url, n: StreamingClient(url, max_connections=n, timeout_s=cfg.request_timeout_s)
    )
    client = factory(base_url, max(p.concurrency for p in plan))
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
            policy = AbortPolicy(server=server)
            reason = policy()
            if reason is not None:
                return _aborted(state, reason, server)
            warm = make_specs(prompt_set, step.warmup, cfg, offset=offset, extra_body=extra_body, nonce=nonce)
            specs = make_specs(
                prompt_set, step.requests, cfg, offset=offset + step.warmup, extra_body=extra_body, nonce=nonce
            )
            offset += step.warmup + step.requests
            if progress is not None:
                progress.start_level(step.concurrency, step.requests, step.warmup)

            def on_result(result: RequestResult, *, _policy: AbortPolicy = policy) -> None:
                _policy.observe(result)
                if progress is not None:
                    progress.on_result(result)

            await client.warm_connections(step.concurrency)
            wall0, cpu0 = time.perf_counter(), time.process_time()
            run: LevelRun = await run_level(
                client, specs, step.concurrency, warmup=warm, on_result=on_result, should_abort=policy
            )
            load = client_load(run, time.perf_counter() - wall0, time.process_time() - cpu0)
            if server is not None and any(not r.ok for r in run.results) and server.is_alive():
                await _settle(server)  # a crash shows as failed requests first, as a process exit a moment later
            reason = run.aborted or policy()
            if reason is not None:
                if progress is not None:
                    progress.end_level(None)
                return _aborted(state, f"level C={step.concurrency} stopped: {reason}", server)
            level = summarize_level(run, error_threshold=cfg.error_threshold, speculative_method=speculative_method)
            level = level.model_copy(update={"client": load})
            state.write(with_level(state.record, level))
            state.levels_done.append(step.concurrency)
            if progress is not None:
                progress.end_level(level)
        state.current_level = None
        state.write(finish_record(state.record))
        state.finished = True
        return state.record
    finally:
        await client.aclose()


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
