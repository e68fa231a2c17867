"""``bench run CONFIG``: launch (or attach to) a serving engine, ask it what it is, sweep concurrency, write one
record.

Before measuring, the server is asked what it is (``bench.runner.claims`` explains what becomes fact, what
stays a claim, and when a disagreement stops the run). The record keeps its recipe: the resolved config and the
overrides (``bench rerun RECORD_ID`` measures it again).

Exit status: 0 complete record (every level measured, none above its error threshold), 1 partial or failed
record (the record and the terminal say why; also when the record file could not be written: its last good
version stays), 2 bad config or command line, a records folder that cannot be written or an open-file limit too
low for the levels, or an attached server that is not what the config says (nothing launched or measured,
nothing written), 130 interrupted (the record keeps every finished level).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shlex
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from bench.record.model import Environment, Recipe, Record
from bench.record.store import new_record_id
from bench.redact import redact_argv, redact_text, redact_value

from .attach import MismatchError, Observation, apply, ask, loopback, mismatch_error, observe
from .claims import reconcile
from .config import ConfigError, RunConfig, load_config, parse_set, url_problem
from .engines import EngineBase, get_engine
from .engines.modelfile import ModelFileError
from .launcher import LaunchError, ServerProcess, free_port, interrupts_raise
from .preflight import check_records_dir, ensure_fd_limit
from .progress import SweepProgress
from .prompts import PromptSet, PromptSetError, load_prompt_set
from .recipe import make_recipe
from .sweep import RecordWriteError, SweepState, create, initial_record, make_plan, now_utc, run_sweep

__all__ = ["add_allow_mismatch", "cli_overrides", "dry_run_text", "execute", "measure", "preflight", "register"]

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_PORT_PLACEHOLDER = "<free port>"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="launch (or attach to) a server, sweep concurrency and write a record",
        description="Run one experiment config: every flag overrides the config's value.",
    )
    p.add_argument("config", help="experiment config (YAML), e.g. bench/configs/llamacpp-smoke/baseline.yaml")
    p.add_argument("--levels", help="comma-separated concurrency levels, e.g. 1,2,4")
    p.add_argument("--requests", help="requests per level: a count or 'Nx' (N x concurrency)")
    p.add_argument("--warmup", help="warm-up requests per level: a count or 'Nx'")
    p.add_argument("--max-tokens", type=int, help="max output tokens per request")
    p.add_argument("--records-dir", help="where records are written (default: the config's, else records/)")
    p.add_argument("--variant", help="record variant name")
    p.add_argument("--url", help="attach to this running server instead of launching one")
    p.add_argument("--log-dir", help="server logs (default: ~/.cache/benchbook/logs)")
    p.add_argument(
        "--request-timeout", type=float, metavar="S", help="seconds one request may take (default: the config's, 600)"
    )
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY.PATH=VALUE", help="override any config value (YAML value)"
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="measure the configuration N times: N records sharing one run_group (repeats give confidence intervals)",
    )
    p.add_argument(
        "--run-group", help="join this run group exactly (a campaign's repeats, run as separate jobs, share one)"
    )
    p.add_argument("--dry-run", action="store_true", help="print the server command and the plan, then exit")
    add_allow_mismatch(p)
    p.set_defaults(handler=_handle)


def add_allow_mismatch(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="measure even when the server reports another engine, model, speculative setting or parallelism than "
        "the config: the record keeps both values and states the server's",
    )


def cli_overrides(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """Command-line flags as config overrides, applied in order (``--set`` first, named flags win)."""
    out = [parse_set(item) for item in args.set]
    if args.levels:
        try:
            levels = [int(x) for x in args.levels.split(",") if x.strip()]
        except ValueError:
            raise ConfigError("--levels", "levels", f"comma-separated integers, got {args.levels!r}") from None
        out.append(("levels", levels))
    for flag, key in (("requests", "requests_per_level"), ("warmup", "warmup")):
        value = getattr(args, flag)
        if value is not None:
            out.append((key, int(value) if value.strip().isdigit() else value))
    for flag, key in (
        ("max_tokens", "max_tokens"),
        ("records_dir", "records_dir"),
        ("variant", "variant"),
        ("request_timeout", "request_timeout_s"),
    ):
        value = getattr(args, flag)
        if value is not None:
            out.append((key, value))
    if args.url:
        out.append(("url", args.url))
    return out


def _log_dir(args: argparse.Namespace) -> Path:
    if args.log_dir:
        return Path(args.log_dir)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "benchbook" / "logs"


def dry_run_text(cfg: RunConfig, engine: EngineBase, prompt_set: PromptSet) -> str:
    """The server command and the sweep plan (pure apart from resolving a local model file)."""
    lines = [f"experiment {cfg.experiment} / variant {cfg.variant} / engine {engine.name}"]
    if cfg.url:
        lines.append(f"attach to: {redact_text(cfg.url)}")
    else:
        cmd = engine.command(cfg, cfg.host, cfg.port or 0)
        if cmd is None:
            lines.append("server command: none (this engine is attach-only: give --url)")
        else:
            if cfg.port is None:
                cmd = [_PORT_PLACEHOLDER if a == "0" and cmd[i - 1] == "--port" else a for i, a in enumerate(cmd)]
            lines.append("server command:")
            shown = shlex.join(redact_argv(cmd))
            lines.append("  " + shown.replace(shlex.quote(_PORT_PLACEHOLDER), _PORT_PLACEHOLDER))
    if cfg.server_env:
        env = " ".join(f"{k}={shlex.quote(redact_value(k, v))}" for k, v in cfg.server_env.items())
        lines.append("server environment: " + env)
    spec = engine.speculative(cfg)
    lines.append(
        "speculative: "
        + (
            "none"
            if spec is None
            else f"{spec.algorithm} steps={spec.num_steps} topk={spec.topk} draft_tokens={spec.num_draft_tokens}"
        )
    )
    lines.append(f"prompt set: {prompt_set.name} ({len(prompt_set.prompts)} prompts, hash {prompt_set.content_hash})")
    lines.append(
        f"api {cfg.api}, max_tokens {cfg.max_tokens}, temperature {cfg.temperature}, ignore_eos {cfg.ignore_eos}, "
        f"seed {cfg.seed}, error threshold {cfg.error_threshold:.0%}"
    )
    lines.append("levels (concurrency: measured requests + warm-up):")
    for step in make_plan(cfg):
        lines.append(f"  C={step.concurrency}: {step.requests} requests + {step.warmup} warm-up")
    lines.append(f"records dir: {cfg.records_dir}")
    return redact_text("\n".join(lines))


def _handle(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    try:
        if args.url is not None and url_problem(args.url) is not None:
            raise ConfigError("--url", "url", str(url_problem(args.url)))
        overrides = cli_overrides(args)
        cfg = load_config(config_path, overrides)
        engine = get_engine(cfg.engine)
        try:
            prompt_set = load_prompt_set(cfg.prompt_set)
        except PromptSetError as exc:  # it names the set's file, line and field
            raise ConfigError(config_path, "prompt_set", f"a loadable prompt set ({exc})") from None
        if args.dry_run:
            print(dry_run_text(cfg, engine, prompt_set))
            return EXIT_OK
        if cfg.url is None and engine.command(cfg, cfg.host, 1) is None:
            raise ConfigError(config_path, "url", f"engine {cfg.engine!r} cannot be launched: give --url")
        raised = preflight(cfg, args.repeat, "--records-dir" if args.records_dir else str(config_path))
    except (ConfigError, ModelFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if raised:
        print(f"note: {raised}", file=sys.stderr)
    recipe = make_recipe(cfg, config_path=config_path, overrides=overrides)
    return measure(
        cfg,
        engine,
        prompt_set,
        log_dir=_log_dir(args),
        repeat=args.repeat,
        allow_mismatch=args.allow_mismatch,
        recipe=recipe,
        run_group=args.run_group,
    )


def preflight(cfg: RunConfig, repeat: int, records_label: str) -> str | None:
    """Checks before anything is launched (raise ConfigError); a note when the open-file limit was raised."""
    if repeat < 1:
        raise ConfigError("--repeat", "repeat", f"a count >= 1, got {repeat}")
    check_records_dir(cfg.records_dir, records_label)
    return ensure_fd_limit(max(cfg.levels))


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
    env = capture_environment(server_env, engine_python=python)
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
                    asyncio.run(
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
