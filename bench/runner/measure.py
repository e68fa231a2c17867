"""Measuring one config: launch (or attach to) the engine, ask it what it is, sweep concurrency, write records.

:func:`measure` repeats :func:`execute` for ``--repeat N`` (the records share a fresh run group). :func:`execute`
is one run: the record file is claimed before the server starts, the server's own report decides what is fact and
what stays a claim (``bench.runner._claims``), and a run that stops for any reason (a crash, Ctrl-C, a full disk)
keeps every finished level with a status that says why.

Exit status: 0 complete record, 1 partial or failed record (also when the record could not be written: its last
good version stays), 2 an attached server that is not what the config says (nothing written) or a records file that
cannot even be created, 130 interrupted.
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console

from bench.record.model import Environment, Recipe, Record
from bench.record.store import new_record_id
from bench.redact import redact_text, redact_value

from ._attach import MismatchError, Observation, apply, ask, loopback, mismatch_error, observe
from ._claims import reconcile
from ._progress import SweepProgress
from .config import RunConfig
from .engines import EngineBase
from .event_loop import EventLoopError, chosen_loop
from .event_loop import run as run_on_loop
from .launcher import LaunchError, ServerProcess, free_port, interrupts_raise
from .prompts import PromptSet
from .sweep import RecordWriteError, SweepState, create, initial_record, now_utc, run_sweep

__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "execute", "measure", "run_group_for"]

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def measure(
    cfg: RunConfig,
    engine: EngineBase,
    prompt_set: PromptSet,
    *,
    log_dir: Path,
    repeat: int,
    allow_mismatch: bool,
    recipe: Recipe | None,
    run_group: str | None = None,
) -> int:
    """Measure ``cfg`` ``repeat`` times (records sharing ``run_group``, else a fresh one); the exit status."""
    cfg = cfg.model_copy(update={"run_group": run_group or run_group_for(cfg, now_utc())})
    try:
        chosen_loop()  # a bad $BENCHBOOK_EVENT_LOOP stops the run before anything is launched or written
    except EventLoopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    worst = EXIT_OK
    for _ in range(repeat):
        try:
            record = execute(cfg, engine, prompt_set, log_dir=log_dir, allow_mismatch=allow_mismatch, recipe=recipe)
        except MismatchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except RecordWriteError as exc:  # nothing was launched when the file could not even be created
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE if exc.kept is None else EXIT_INCOMPLETE
        if record is None:
            return EXIT_INTERRUPTED
        if record.status.state != "complete":
            worst = EXIT_INCOMPLETE
    return worst


def run_group_for(cfg: RunConfig, started: datetime) -> str:
    """One fresh group per invocation: the N records of ``--repeat N`` share it, later runs never do.

    (A config's ``run_group`` is a prefix, so the group still says what was measured.)"""
    base = cfg.run_group or f"{cfg.experiment}-{cfg.variant}"
    return f"{base}-{started.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(2)}"


def _environment(cfg: RunConfig, server_env: Mapping[str, str], *, launched: bool) -> Environment:
    """The host's environment, with the packages of the Python that runs SGLang: for a launched SGLang the
    interpreter the harness starts it with; for an attached one only a ``binary`` the config names, on this host
    (a loopback URL): what it reads there is then the config's word (claimed, see ``attach.observe``)."""
    from .environment import capture_environment

    python = None
    if cfg.engine == "sglang" and launched:
        python = cfg.binary or "python3"
    elif cfg.engine == "sglang" and cfg.binary and loopback(cfg.url or ""):
        python = cfg.binary
    # the GPUs this host has are the server's only when the server runs here (launched, or a loopback URL)
    on_this_host = launched or loopback(cfg.url or "")
    env = capture_environment(server_env, engine_python=python, gpus=on_this_host)
    set_vars = {k: redact_value(k, v) for k, v in cfg.server_env.items()}
    return env.model_copy(update={"env_vars": {**env.env_vars, **set_vars}})


def _announce(progress: SweepProgress, o: Observation) -> None:
    for m in o.mismatches:
        progress.message(f"mismatch kept (--allow-mismatch): {m.field}: config {m.claimed!r}, server {m.observed!r}")
    if o.claims:
        progress.message("claimed (the server does not report them): " + ", ".join(o.claims))


def execute(
    cfg: RunConfig,
    engine: EngineBase,
    prompt_set: PromptSet,
    *,
    log_dir: Path,
    console: Console | None = None,
    allow_mismatch: bool = False,
    recipe: Recipe | None = None,
) -> Record | None:
    """Launch or attach, ask the server what it is, sweep, and return the final record (None when interrupted).

    Raises :class:`MismatchError` before any record file exists when an attached server is not what the config
    says (unless ``allow_mismatch``)."""
    from .environment import capture_benchbook

    progress = SweepProgress(console)
    created_at = now_utc()
    record_id = new_record_id(cfg.variant, created_at)
    host = cfg.host
    port = cfg.port or free_port(host)
    command = None if cfg.url else engine.command(cfg, host, port)
    base_url = cfg.url or f"http://{host}:{port}"
    server_env = {**os.environ, **cfg.server_env}
    log_path = log_dir / f"{record_id}.log"
    notes = [f"server log: {log_path}"] if command is not None else []
    base_env = _environment(cfg, server_env, launched=command is not None)
    intro = None
    if command is None:
        try:
            with interrupts_raise():
                intro = ask(engine, base_url)
        except KeyboardInterrupt:
            return None
    rec = reconcile(cfg, engine, intro, argv=command)
    if intro is not None and rec.mismatches and not allow_mismatch:
        raise mismatch_error(rec, intro.observed, base_url, launched=False)
    seen = observe(engine, rec, intro, url=base_url, command=command, base_environment=base_env, notes=notes)
    first = initial_record(
        cfg=rec.cfg,
        record_id=record_id,
        created_at=created_at,
        prompt_set=prompt_set,
        server=seen.server,
        model=seen.model,
        speculative=seen.speculative,
        environment=seen.environment,
        benchbook=capture_benchbook(),
        test_server=seen.test_server,
    )
    state = create(Path(cfg.records_dir), apply(first, seen, recipe=recipe.model_dump() if recipe else None))
    progress.message(f"record: {state.path}")
    if intro is not None:
        _announce(progress, seen)
    process: ServerProcess | None = None
    try:
        with interrupts_raise():
            try:
                if command is None and intro is None:
                    state.fail(f"the server at {redact_text(base_url)} is not ready (readiness check failed)")
                    return _done(progress, state)
                if command is not None:
                    progress.message("server: " + shlex.join(seen.server.command or command))
                    process = ServerProcess(command, log_path=log_path, extra_env=cfg.server_env).start()
                    with httpx.Client(base_url=base_url, timeout=30.0) as http:
                        took = process.wait_ready(lambda: engine.is_ready(http), timeout_s=cfg.ready_timeout_s)
                        progress.message(f"server ready after {took:.1f} s")
                        intro = engine.introspect(http)
                    rec = reconcile(cfg, engine, intro, argv=command)
                    seen = observe(
                        engine, rec, intro, url=base_url, command=command, base_environment=base_env, notes=notes
                    )
                    state.write(apply(state.record, seen))
                    _announce(progress, seen)
                    if rec.mismatches and not allow_mismatch:
                        state.fail(str(mismatch_error(rec, intro.observed, base_url, launched=True)), process.tail())
                        return _done(progress, state)
                with progress:
                    run_on_loop(
                        run_sweep(
                            state,
                            cfg,
                            prompt_set,
                            base_url=base_url,
                            server=process,
                            progress=progress,
                            extra_body=engine.extra_body(rec.cfg),
                            speculative_method=engine.speculative_method(rec.cfg),
                        )
                    )
            except LaunchError as exc:
                state.fail(str(exc), exc.log_excerpt)
            finally:
                if process is not None:
                    process.stop(cfg.stop_timeout_s)
    except KeyboardInterrupt as exc:
        if not state.finished:
            where = f" during level C={state.current_level}" if state.current_level is not None else ""
            state.fail(
                f"interrupted ({exc or 'Ctrl-C'}){where}; the server was stopped",
                process.tail() if process is not None else None,
            )
        _done(progress, state)
        return None
    except BaseException as exc:
        if not state.finished:
            state.fail(f"harness error: {type(exc).__name__}: {exc}", process.tail() if process is not None else None)
        raise
    return _done(progress, state)


def _done(progress: SweepProgress, state: SweepState) -> Record:
    progress.summary(state.record, state.path)
    if state.write_error is not None:
        if state.unwritten is not None and state.unwritten.status.message:
            progress.message(f"the run stopped: {state.unwritten.status.state}: {state.unwritten.status.message}")
        progress.message(f"error: {state.write_error}")
    return state.record
