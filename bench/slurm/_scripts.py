"""The two sbatch scripts of a submission, as text (pure): the job array and the collector.

The array script holds one ``case`` line per task, so what each task runs is readable in the script itself
(``bench submit --dry-run`` prints it). A task ``exec``s ``bench run``, so the batch step *is* bench run:
``scancel`` (SIGTERM, then SIGKILL after the cluster's ``KillWait``) and ``--signal=B:TERM@120`` before the
time limit reach it directly, and it keeps every finished level in a partial record, as on one machine.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from .campaign import SlurmOptions
from .plan import PLAN_FILE, Plan

__all__ = ["array_script", "array_spec", "collector_script", "sbatch_options"]


def array_spec(indices: Iterable[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``0-2,5,7-8`` (sbatch --array syntax)."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(set(indices)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(parts)


def sbatch_options(opts: SlurmOptions) -> list[str]:
    """The array's resource options, in sbatch's long form."""
    out: list[str] = []
    for flag, value in (
        ("partition", opts.partition),
        ("account", opts.account),
        ("time", opts.time),
        ("nodes", opts.nodes),
        ("gres", opts.gres),
        ("gpus", opts.gpus),
        ("cpus-per-task", opts.cpus_per_task),
        ("mem", opts.mem),
        ("constraint", opts.constraint),
        ("signal", opts.signal),
    ):
        if value is not None:
            out.append(f"--{flag}={value}")
    return [*out, *opts.extra]


def _header(lines: Sequence[str], options: Sequence[str]) -> list[str]:
    return ["#!/bin/bash", *(f"# {line}" for line in lines), *(f"#SBATCH {o}" for o in options)]


def array_script(plan: Plan, opts: SlurmOptions, indices: Sequence[int], *, job_name: str | None = None) -> str:
    """One Slurm job array running ``bench run`` once per task in ``indices``."""
    q = shlex.quote
    results = plan.folder
    array = array_spec(indices) + (f"%{opts.max_parallel}" if opts.max_parallel else "")
    options = [
        f"--job-name={job_name or 'bench-' + plan.name}",
        f"--array={array}",
        f"--output={results / 'logs' / '%A_%a.out'}",
        f"--chdir={plan.workdir}",
        "--ntasks=1",
        *sbatch_options(opts),
    ]
    attach = plan.server is not None
    lines = _header(
        [
            f"benchbook campaign {plan.name!r}: one `bench run` per task (written by `bench submit`).",
            f"The plan, with each task's variant and repeat: {results / PLAN_FILE}",
        ],
        options,
    )
    lines += [
        "set -u",
        "# The Slurm facts a record keeps come from the allow-listed SLURM_* variables; Slurm does not export its",
        "# own version, so it is read here from the node's Slurm client.",
        'if [ -z "${SLURM_VERSION:-}" ] && v="$(sinfo --version 2>/dev/null)"; then',
        '  export SLURM_VERSION="${v##* }"',
        "fi",
        f"RESULTS={q(str(results))}",
        f"PY={q(plan.python)}",
    ]
    if attach:
        lines += [
            "run() {  # attach: start the campaign's server on this node, bench run against it, stop it",
            f'  exec "$PY" -m bench.slurm.attach "$RESULTS/{PLAN_FILE}" "$@"',
            "}",
        ]
    else:
        lines += [
            "run() {  # launch: bench run starts the server on the resources Slurm gave this task",
            '  exec "$PY" -m bench run "$@"',
            "}",
        ]
    lines.append('case "${SLURM_ARRAY_TASK_ID:?this script runs as a Slurm array task}" in')
    by_index = {t.index: t for t in plan.tasks}
    for i in sorted(set(indices)):
        t = by_index[i]
        argv = [
            f'"$RESULTS"/{q(t.config)}',
            "--records-dir",
            f'"$RESULTS"/tasks/{t.index}',
            "--log-dir",
            '"$RESULTS"/logs/server',
            "--run-group",
            q(t.run_group),
        ]
        lines.append(f"  {t.index}) run {' '.join(argv)} ;;  # {t.experiment}/{t.variant} repeat {t.repeat + 1}")
    lines += [
        f'  *) echo "task $SLURM_ARRAY_TASK_ID is not part of campaign {plan.name}" >&2; exit 2 ;;',
        "esac",
    ]
    return "\n".join(lines) + "\n"


def collector_script(plan: Plan, opts: SlurmOptions, *, commit: str | None) -> str:
    """The collector job (submitted with --dependency=afterany on the array): validate, list, commit."""
    q = shlex.quote
    c = opts.collector
    options = [
        f"--job-name=bench-{plan.name}-collect",
        f"--output={plan.folder / 'logs' / 'collect_%j.out'}",
        f"--chdir={plan.workdir}",
        "--ntasks=1",
        f"--time={c.time}",
    ]
    for flag, value in (("partition", c.partition or opts.partition), ("account", c.account or opts.account)):
        if value is not None:
            options.append(f"--{flag}={value}")
    options += c.extra
    argv = [q(plan.python), "-m", "bench", "collect", q(str(plan.folder))]
    if commit is not None:
        argv += ["--commit", q(commit)]
        if plan.repo is not None:
            argv += ["--repo", q(plan.repo)]
    lines = _header(
        [
            f"benchbook campaign {plan.name!r}: the collector, run after every array task ended (afterany).",
            "It validates each task's record and lists the tasks with no complete record, their Slurm state and log.",
        ],
        options,
    )
    lines += ["set -u", "exec " + " ".join(argv)]
    return "\n".join(lines) + "\n"
