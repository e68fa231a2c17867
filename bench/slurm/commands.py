"""``bench submit CAMPAIGN.yaml`` (with ``--dry-run``, ``--status``, ``--resume``) and ``bench collect``.

Exit status: 0 done (collect: every task has a complete record); 1 collect: some task has none; 2 bad campaign,
bad command line, Slurm or git refused (nothing submitted or committed).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.atomic_write import write_atomic
from bench.git import CommitError, commit_files
from bench.redact import redact_argv

from ._cluster import Runner, SlurmError, default_runner, sbatch, task_states
from ._scripts import array_script, array_spec, collector_script
from .campaign import Campaign, CampaignError, expand, load_campaign
from .collect import TaskOutcome, collect, exit_status, render_json, render_text
from .plan import (
    PLAN_FILE,
    Plan,
    PlanError,
    Submission,
    build_plan,
    default_results,
    frozen_config,
    read_plan,
    write_plan,
)

__all__ = ["register", "resume", "submit"]

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE = 0, 1, 2
LIVE_STATES = frozenset({"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"})
RECORDS_DIR = "records"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "submit",
        help="run a campaign (configs x repeats) as one Slurm job array plus a collector job",
        description="Submit a campaign: one Slurm array task per config x repeat, then a collector job (afterany).",
    )
    p.add_argument("campaign", help="campaign YAML (for --status also its results folder)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the plan and the sbatch scripts; submit nothing")
    mode.add_argument("--status", action="store_true", help="each task's Slurm state and record (squeue/sacct)")
    mode.add_argument("--resume", action="store_true", help="resubmit only the tasks with no complete record")
    p.add_argument("--format", choices=["text", "json"], default="text", help="--status output")
    p.set_defaults(handler=_handle_submit)

    c = sub.add_parser(
        "collect",
        help="validate a campaign's records, list tasks without one, optionally commit them on a branch",
        description="The collector (run by Slurm after the array; also by hand).",
    )
    c.add_argument("campaign", help="the campaign's results folder (or its YAML)")
    c.add_argument("--commit", metavar="BRANCH", help="commit the complete records on BRANCH (never checked out)")
    c.add_argument("--repo", help="the repository to commit into (default: the one bench submit ran in)")
    c.add_argument("--base", help="where a new BRANCH starts (default: origin/main, else main, else HEAD)")
    c.add_argument("--with-incomplete", action="store_true", help="also commit partial and failed records")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.set_defaults(handler=_handle_collect)


def _results(campaign: Campaign, path: Path) -> Path:
    if campaign.results is None:
        return default_results(campaign.name)
    return (path.resolve().parent / campaign.results).resolve()


def _plan_for(target: Path) -> Plan:
    """A plan from a results folder or from the campaign YAML that names it."""
    if target.is_dir():
        return read_plan(target)
    campaign = load_campaign(target)
    return read_plan(_results(campaign, target))


def _repo_root(folder: Path) -> Path | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def _describe(plan: Plan) -> str:
    lines = [f"campaign {plan.name}: {len(plan.tasks)} task(s) -> {plan.folder}", f"work dir: {plan.workdir}"]
    if plan.server is not None:
        lines.append("attach: each task starts " + shlex.join(redact_argv(plan.server.command)) + " on its node")
    for t in plan.tasks:
        lines.append(f"  task {t.index}: {t.experiment}/{t.variant} repeat {t.repeat + 1} ({t.config}, {t.run_group})")
    return "\n".join(lines)


def _submit_scripts(plan: Plan, campaign: Campaign, indices: list[int], run: Runner) -> Plan:
    """Write the scripts of submission n, submit the array then the collector; the plan with it recorded."""
    number = len(plan.submissions) + 1
    scripts = plan.folder / "scripts"
    array_file, collect_file = scripts / f"array-{number}.sh", scripts / f"collect-{number}.sh"
    write_atomic(array_file, array_script(plan, campaign.slurm, indices))
    write_atomic(collect_file, collector_script(plan, campaign.slurm, commit=campaign.commit))
    (plan.folder / "logs" / "server").mkdir(parents=True, exist_ok=True)
    array_job = sbatch(str(array_file), run=run)
    sub = Submission(
        number=number,
        submitted_at=datetime.now(UTC),
        array_job=array_job,
        tasks=sorted(indices),
        array_script=str(array_file),
        collector_script=str(collect_file),
    )
    plan = plan.with_submission(sub)
    write_plan(plan)  # the array is in: record it before anything else can fail
    try:
        collector = sbatch(str(collect_file), run=run, dependency=f"afterany:{array_job}")
    except SlurmError as exc:
        print(f"warning: the collector was not submitted ({exc}); run `bench collect {plan.folder}`", file=sys.stderr)
        return plan
    subs = [*plan.submissions[:-1], sub.model_copy(update={"collector_job": collector})]
    plan = plan.model_copy(update={"submissions": subs})
    write_plan(plan)
    return plan


def submit(path: Path, *, dry_run: bool, run: Runner = default_runner) -> int:
    campaign = load_campaign(path)
    variants, tasks = expand(campaign, path)
    results = _results(campaign, path)
    if any(c.isspace() for c in str(results)):
        raise CampaignError(path, "results", f"a folder without spaces (sbatch options cannot quote), got {results}")
    if (results / PLAN_FILE).exists() and not dry_run:
        raise CampaignError(
            path, "results", f"a folder not used by an earlier submission ({results} has one: use --status or --resume)"
        )
    workdir = Path.cwd()
    plan = build_plan(
        campaign,
        path,
        tasks,
        results=results,
        workdir=workdir,
        repo=_repo_root(workdir),
        python=campaign.python or sys.executable,
        now=datetime.now(UTC),
    )
    indices = [t.index for t in plan.tasks]
    if dry_run:
        print(_describe(plan))
        print(f"\n# sbatch --parsable {results}/scripts/array-1.sh")
        print(array_script(plan, campaign.slurm, indices))
        print(f"# sbatch --parsable --dependency=afterany:<array job> {results}/scripts/collect-1.sh")
        print(collector_script(plan, campaign.slurm, commit=campaign.commit))
        return EXIT_OK
    for v in variants:
        write_atomic(results / "configs" / f"{v.key}.yaml", frozen_config(v))
    write_plan(plan)
    plan = _submit_scripts(plan, campaign, indices, run)
    sub = plan.submissions[-1]
    print(
        f"campaign {plan.name}: {len(indices)} task(s) ({array_spec(indices)}) submitted as array job {sub.array_job}"
    )
    if sub.collector_job:
        print(f"collector: job {sub.collector_job} (runs after every task ends: afterany)")
    print(f"results: {results}\nstatus:  bench submit --status {path}")
    return EXIT_OK


def _states(plan: Plan, run: Runner) -> dict[tuple[str, int], Any]:
    return task_states([s.array_job for s in plan.submissions], run=run)


def resume(path: Path, *, run: Runner = default_runner) -> int:
    campaign = load_campaign(path)
    plan = read_plan(_results(campaign, path))
    outcomes = collect(plan, _states(plan, run))
    live = [o for o in outcomes if o.state != "complete" and o.slurm_state in LIVE_STATES]
    todo = [o.task.index for o in outcomes if o.state != "complete" and o.slurm_state not in LIVE_STATES]
    for o in live:
        print(f"task {o.task.index}: still {o.slurm_state} (not resubmitted)")
    if not todo:
        print(f"campaign {plan.name}: nothing to resume (every task has a complete record or is still queued)")
        return EXIT_OK
    plan = _submit_scripts(plan, campaign, todo, run)
    sub = plan.submissions[-1]
    print(f"campaign {plan.name}: resubmitted {len(todo)} task(s) ({array_spec(todo)}) as array job {sub.array_job}")
    if sub.collector_job:
        print(f"collector: job {sub.collector_job} (afterany)")
    return EXIT_OK


def _handle_submit(args: argparse.Namespace) -> int:
    path = Path(args.campaign)
    try:
        if args.status:
            plan = _plan_for(path)
            outcomes = collect(plan, _states(plan, default_runner))
            print(render_json(plan, outcomes) if args.format == "json" else render_text(plan, outcomes))
            return EXIT_OK
        if args.resume:
            return resume(path)
        return submit(path, dry_run=args.dry_run)
    except (CampaignError, PlanError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SlurmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def commit_records(
    plan: Plan, outcomes: list[TaskOutcome], *, repo: Path, branch: str, base: str | None, with_incomplete: bool
) -> str:
    """Commit the campaign's records on ``branch``; a one-line account of what was committed."""
    files: dict[str, Path] = {}
    for o in outcomes:
        for rec in o.records if with_incomplete else o.complete:
            files[f"{RECORDS_DIR}/{rec.record.experiment}/{rec.record.id}.json"] = rec.path
    if not files:
        return f"nothing to commit on {branch}: no {'valid' if with_incomplete else 'complete'} record"
    jobs = ", ".join(s.array_job for s in plan.submissions) or "none"
    message = (
        f"campaign {plan.name}: {len(files)} record(s)\n\n"
        f"Collected by `bench collect` from {plan.folder} (Slurm array job(s): {jobs}).\n\n"
        + "\n".join(sorted(files))
        + "\n"
    )
    result = commit_files(repo, branch, files, message, base=base)
    if result.commit is None:
        return f"nothing new to commit on {branch}: its {len(result.unchanged)} record(s) are already there"
    return (
        f"committed {len(result.added)} record(s) on {branch} ({result.commit[:12]}, parent {result.parent[:12]})"
        + (f"; {len(result.unchanged)} already there" if result.unchanged else "")
    )


def _handle_collect(args: argparse.Namespace) -> int:
    try:
        plan = _plan_for(Path(args.campaign))
    except (CampaignError, PlanError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    outcomes = collect(plan, _states(plan, default_runner))
    print(render_json(plan, outcomes) if args.format == "json" else render_text(plan, outcomes))
    if args.commit:
        repo = Path(args.repo or plan.repo or ".")
        try:
            line = commit_records(
                plan, outcomes, repo=repo, branch=args.commit, base=args.base, with_incomplete=args.with_incomplete
            )
        except CommitError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(line, file=sys.stderr if args.format == "json" else sys.stdout)
    return exit_status(outcomes)
