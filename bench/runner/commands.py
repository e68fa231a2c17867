"""``bench run CONFIG``: launch (or attach to) a serving engine, ask it what it is, sweep concurrency, write one
record.

Before measuring, the server is asked what it is (``bench.runner._claims`` explains what becomes fact, what
stays a claim, and when a disagreement stops the run). The record keeps its recipe: the resolved config and the
overrides (``bench rerun RECORD_ID`` measures it again). The command line lives here; the measuring in
``bench.runner.measure``.

Exit status: 0 complete record (every level measured, none above its error threshold), 1 partial or failed
record (the record and the terminal say why; also when the record file could not be written: its last good
version stays), 2 bad config or command line, a records folder that cannot be written or an open-file limit too
low for the levels, or an attached server that is not what the config says (nothing launched or measured,
nothing written), 130 interrupted (the record keeps every finished level).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from bench.record.model import Recipe
from bench.redact import redact_argv, redact_text, redact_value

from ._preflight import check_records_dir, check_tensor_parallel, ensure_fd_limit
from ._recipe import make_recipe
from .config import ConfigError, RunConfig, load_config, parse_set, url_problem
from .engines import EngineBase, get_engine
from .engines.modelfile import ModelFileError
from .measure import EXIT_OK, EXIT_USAGE, measure
from .prompts import PromptSet, PromptSetError, load_prompt_set
from .sweep import make_plan

__all__ = [
    "add_allow_mismatch",
    "cli_overrides",
    "dry_run_text",
    "measure_as_asked",
    "preflight",
    "register",
]

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
        "--client-processes",
        type=int,
        metavar="N",
        help="spread each level over N client processes, one record (default: the config's, 1)",
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
        ("client_processes", "client_processes"),
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
        if cfg.url is None:
            check_tensor_parallel(dict(cfg.server_args), cfg.model.path, str(config_path))
        raised = preflight(cfg, args.repeat, "--records-dir" if args.records_dir else str(config_path))
    except (ConfigError, ModelFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    recipe = make_recipe(cfg, config_path=config_path, overrides=overrides)
    return measure_as_asked(args, cfg, engine, prompt_set, recipe=recipe, note=raised, run_group=args.run_group)


def measure_as_asked(
    args: argparse.Namespace,
    cfg: RunConfig,
    engine: EngineBase,
    prompt_set: PromptSet,
    *,
    recipe: Recipe,
    note: str | None,
    run_group: str | None = None,
) -> int:
    """``bench run``'s and ``bench rerun``'s last step: the preflight's note, then :func:`measure` with the
    command line's log folder, repeat count and ``--allow-mismatch``."""
    if note:
        print(f"note: {note}", file=sys.stderr)
    return measure(
        cfg,
        engine,
        prompt_set,
        log_dir=_log_dir(args),
        repeat=args.repeat,
        allow_mismatch=args.allow_mismatch,
        recipe=recipe,
        run_group=run_group,
    )


def preflight(cfg: RunConfig, repeat: int, records_label: str) -> str | None:
    """Checks before anything is launched (raise ConfigError); a note when the open-file limit was raised."""
    if repeat < 1:
        raise ConfigError("--repeat", "repeat", f"a count >= 1, got {repeat}")
    check_records_dir(cfg.records_dir, records_label)
    return ensure_fd_limit(max(cfg.levels))
