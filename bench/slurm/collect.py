"""Each task's outcome: its records (validated), its Slurm state and its log. Used by ``bench collect`` (the
collector job) and ``bench submit --status``; rendering is pure, the Slurm states are passed in.

A task's records are every ``.json`` file under ``<results>/tasks/<index>/``, each loaded exactly as the
review gate loads one (schema, migrations, ``<experiment>/<id>.json`` layout), and checked against the task:
same experiment, variant and run group. A task is

* ``complete`` when one of its records is valid, matches and has status ``complete``;
* ``partial`` / ``failed`` when its best valid record has that status (a cancelled or crashed run);
* ``invalid`` when a file there does not load or does not belong to the task;
* ``missing`` when it wrote no record at all (it never started, or died before creating one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.record.load import LoadedRecord, load_records
from bench.redact import redact_text

from ._cluster import TaskState
from .plan import Plan, PlanTask

__all__ = ["TaskOutcome", "collect", "exit_status", "render_json", "render_text", "task_outcome"]

_RANK = {"complete": 3, "partial": 2, "failed": 1}


@dataclass
class TaskOutcome:
    task: PlanTask
    records: list[LoadedRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    slurm: TaskState | None = None
    log: Path | None = None
    array_job: str | None = None

    @property
    def state(self) -> str:
        if self.problems:
            return "invalid"
        if not self.records:
            return "missing"
        return max((r.record.status.state for r in self.records), key=lambda s: _RANK[s])

    @property
    def best(self) -> LoadedRecord | None:
        """The task's most complete record (the latest among equals)."""
        ranked = sorted(self.records, key=lambda r: (_RANK[r.record.status.state], r.record.created_at))
        return ranked[-1] if ranked else None

    @property
    def complete(self) -> list[LoadedRecord]:
        return [r for r in self.records if r.record.status.state == "complete"]

    @property
    def slurm_state(self) -> str:
        if self.array_job is None:
            return "NOT SUBMITTED"
        return self.slurm.state if self.slurm is not None else "UNKNOWN"


def task_outcome(plan: Plan, task: PlanTask) -> TaskOutcome:
    """Load and check the records one task wrote (no Slurm query)."""
    outcome = TaskOutcome(task=task, log=plan.log_path(task.index))
    sub = plan.last_submission(task.index)
    outcome.array_job = sub.array_job if sub is not None else None
    loaded = load_records(plan.records_dir(task.index))
    outcome.problems += [str(err) for err in loaded.errors]
    for rec in loaded.records:
        r = rec.record
        wrong = [
            f"{name} {got!r} (the task's is {want!r})"
            for name, got, want in (
                ("experiment", r.experiment, task.experiment),
                ("variant", r.variant, task.variant),
                ("run_group", r.run_group, task.run_group),
            )
            if got != want
        ]
        if wrong:
            outcome.problems.append(f"{rec.path}: not this task's record: " + ", ".join(wrong))
        else:
            outcome.records.append(rec)
    return outcome


def collect(plan: Plan, states: Mapping[tuple[str, int], TaskState]) -> list[TaskOutcome]:
    out = []
    for task in plan.tasks:
        outcome = task_outcome(plan, task)
        if outcome.array_job is not None:
            outcome.slurm = states.get((outcome.array_job, task.index))
        out.append(outcome)
    return out


def exit_status(outcomes: list[TaskOutcome]) -> int:
    """0 when every task has a complete, valid record; 1 otherwise."""
    return 0 if all(o.state == "complete" for o in outcomes) else 1


def _row(plan: Plan, o: TaskOutcome) -> str:
    t = o.task
    best = o.best
    shown = "-" if best is None else str(best.path.relative_to(plan.folder))
    return f"{t.index:>5}  {o.state:<8}  {o.slurm_state:<11}  {t.experiment}/{t.variant} #{t.repeat + 1}  {shown}"


def render_text(plan: Plan, outcomes: list[TaskOutcome]) -> str:
    """Every task with its state; below, each task without a complete record with its Slurm state and log."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.state] = counts.get(o.state, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    lines = [f"campaign {plan.name}: {len(outcomes)} task(s): {summary}", f"folder: {plan.folder}", ""]
    lines.append(f"{'task':>5}  {'record':<8}  {'slurm':<11}  experiment/variant #repeat  record file")
    lines += [_row(plan, o) for o in outcomes]
    todo = [o for o in outcomes if o.state != "complete"]
    if todo:
        lines += ["", "tasks without a complete record:"]
        for o in todo:
            job = f"job {o.slurm.job_id} " if o.slurm is not None and o.slurm.job_id else ""
            code = f", exit {o.slurm.exit_code}" if o.slurm is not None and o.slurm.exit_code else ""
            lines.append(f"  task {o.task.index}: {o.state}; Slurm {job}{o.slurm_state}{code}; log {o.log or '-'}")
            for rec in o.records:
                msg = rec.record.status.message or ""
                lines.append(f"    {rec.record.status.state} record {rec.path}: {redact_text(msg)[:300]}")
            lines += [f"    {redact_text(p)[:500]}" for p in o.problems]
    return "\n".join(lines)


def render_json(plan: Plan, outcomes: list[TaskOutcome]) -> str:
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        rows.append(
            {
                "index": o.task.index,
                "experiment": o.task.experiment,
                "variant": o.task.variant,
                "repeat": o.task.repeat,
                "state": o.state,
                "records": [{"path": str(r.path), "state": r.record.status.state} for r in o.records],
                "problems": [redact_text(p) for p in o.problems],
                "slurm": {
                    "state": o.slurm_state,
                    "array_job": o.array_job,
                    "job_id": o.slurm.job_id if o.slurm else None,
                    "exit_code": o.slurm.exit_code if o.slurm else None,
                    "nodes": o.slurm.nodes if o.slurm else None,
                    "source": o.slurm.source if o.slurm else None,
                },
                "log": None if o.log is None else str(o.log),
            }
        )
    return json.dumps({"campaign": plan.name, "folder": str(plan.folder), "tasks": rows}, indent=2)
