"""Attach mode of a campaign task: start the campaign's server on this node, ``bench run --url`` against it,
stop it. Run by the array script: ``python -m bench.slurm.attach <results>/campaign.json CONFIG [bench run
args...]``.

The server runs in its own process group, with its log under ``<results>/logs/server/``; SIGTERM (``scancel``,
the time-limit signal) at any point stops it, and bench run, which handles SIGTERM itself, keeps every
finished level. A server that does not become ready still gets a ``bench run``: its record then says
``failed`` with the reason, so the campaign keeps the evidence instead of a missing record.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from bench.runner.config import ConfigError, load_config
from bench.runner.engines import get_engine
from bench.runner.launcher import LaunchError, ServerProcess, free_port, interrupts_raise

from .plan import PlanError, read_plan

__all__ = ["main", "server_command"]


def server_command(command: Sequence[str], port: int) -> list[str]:
    return [a.replace("{port}", str(port)) for a in command]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print("usage: python -m bench.slurm.attach PLAN_FILE CONFIG [bench run args...]", file=sys.stderr)
        return 2
    from bench.cli import main as bench_main

    plan_file, config, rest = Path(args[0]), args[1], args[2:]
    try:
        plan = read_plan(plan_file.parent)
        engine = get_engine(load_config(Path(config)).engine)
    except (PlanError, ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if plan.server is None:
        print(f"error: {plan_file}: field 'server': a server to attach to (this campaign launches)", file=sys.stderr)
        return 2
    port = free_port(plan.server.host)
    url = f"http://{plan.server.host}:{port}"
    job = f"{os.environ.get('SLURM_ARRAY_JOB_ID', 'local')}_{os.environ.get('SLURM_ARRAY_TASK_ID', '0')}"
    log_path = plan.folder / "logs" / "server" / f"{job}.log"
    server = ServerProcess(server_command(plan.server.command, port), log_path=log_path)
    try:
        with interrupts_raise():
            try:
                server.start()
                with httpx.Client(base_url=url, timeout=10.0) as http:
                    took = server.wait_ready(lambda: engine.is_ready(http), timeout_s=plan.server.ready_timeout_s)
                print(f"server ready at {url} after {took:.1f} s (log: {server.log_path})", flush=True)
            except LaunchError as exc:
                print(f"server not ready: {exc}", file=sys.stderr, flush=True)
            return bench_main(["run", config, *rest, "--url", url])
    except KeyboardInterrupt as exc:  # a signal before bench run took over its handling
        print(f"interrupted before the sweep ({exc})", file=sys.stderr)
        return 130
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
