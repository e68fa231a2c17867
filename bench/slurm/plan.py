"""A submitted campaign on shared storage: the plan file, frozen configs, records and logs, in one folder.

::

    <results>/campaign.json          the plan: tasks, run groups, every submission's job ids (this module)
    <results>/configs/<exp>.<variant>.yaml   each variant's config as resolved at submission (frozen)
    <results>/scripts/array-<n>.sh, collect-<n>.sh   the sbatch scripts of submission n
    <results>/tasks/<index>/<experiment>/<id>.json    the records task <index> wrote (bench run --records-dir)
    <results>/logs/<array job>_<index>.out            each task's log; collect_<job>.out the collector's

Tasks keep their index for life: a resubmission (``--resume``) runs the same indices again, writing into the
same task folder, so a task's records are every attempt's. The plan is written atomically (temp + rename).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.atomic_write import write_atomic
from bench.errors import FieldError, from_validation_error, read_text_file

from .campaign import Campaign, ServerOptions, TaskSpec, VariantSpec

__all__ = [
    "PLAN_FILE",
    "Plan",
    "PlanError",
    "PlanTask",
    "Submission",
    "build_plan",
    "default_results",
    "frozen_config",
    "read_plan",
    "write_plan",
]

PLAN_FILE = "campaign.json"


class PlanError(FieldError):
    """A campaign folder whose plan is missing or unreadable."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanTask(_Strict):
    index: int = Field(ge=0)
    experiment: str
    variant: str
    engine: str
    repeat: int = Field(ge=0)
    config: str = Field(description="the frozen config, relative to the campaign folder")
    run_group: str


class Submission(_Strict):
    number: int = Field(ge=1)
    submitted_at: datetime
    array_job: str
    collector_job: str | None = None
    tasks: list[int]
    array_script: str
    collector_script: str


class Plan(_Strict):
    format: Literal[1] = 1
    name: str
    campaign_file: str
    created_at: datetime
    workdir: str = Field(description="where tasks run (sbatch --chdir): the folder bench submit ran in")
    repo: str | None = Field(default=None, description="the git repository the collector commits into")
    python: str
    results: str
    server: ServerOptions | None = None
    tasks: list[PlanTask]
    submissions: list[Submission] = Field(default_factory=list)

    @property
    def folder(self) -> Path:
        return Path(self.results)

    def records_dir(self, index: int) -> Path:
        return self.folder / "tasks" / str(index)

    def last_submission(self, index: int) -> Submission | None:
        for sub in reversed(self.submissions):
            if index in sub.tasks:
                return sub
        return None

    def log_path(self, index: int) -> Path | None:
        """The log of the task's latest attempt (sbatch --output=logs/%A_%a.out)."""
        sub = self.last_submission(index)
        return None if sub is None else self.folder / "logs" / f"{sub.array_job}_{index}.out"

    def with_submission(self, submission: Submission) -> Plan:
        return self.model_copy(update={"submissions": [*self.submissions, submission]})


def default_results(name: str) -> Path:
    """``~/.cache/benchbook/campaigns/<name>``: home folders are on storage every node sees on most clusters."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "benchbook" / "campaigns" / name


def frozen_config(variant: VariantSpec) -> str:
    """The variant's resolved config as YAML, with where it came from."""
    data: dict[str, Any] = variant.config.model_dump(mode="json", exclude_unset=True)
    overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in variant.overrides) or "none"
    head = f"# frozen by `bench submit` from {variant.source} ({variant.origin}); overrides: {overrides}\n"
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def build_plan(
    campaign: Campaign,
    campaign_path: Path,
    tasks: list[TaskSpec],
    *,
    results: Path,
    workdir: Path,
    repo: Path | None,
    python: str,
    now: datetime,
) -> Plan:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Plan(
        name=campaign.name,
        campaign_file=str(campaign_path.resolve()),
        created_at=now,
        workdir=str(workdir),
        repo=None if repo is None else str(repo),
        python=python,
        results=str(results),
        server=campaign.server,
        tasks=[
            PlanTask(
                index=t.index,
                experiment=t.variant.config.experiment,
                variant=t.variant.config.variant,
                engine=t.variant.config.engine,
                repeat=t.repeat,
                config=f"configs/{t.variant.key}.yaml",
                run_group=f"{campaign.name}-{t.variant.config.variant}-{stamp}",
            )
            for t in tasks
        ],
    )


def write_plan(plan: Plan) -> Path:
    path = plan.folder / PLAN_FILE
    write_atomic(path, plan.model_dump_json(indent=2) + "\n")
    return path


def read_plan(folder: Path) -> Plan:
    path = folder / PLAN_FILE
    if not path.is_file():
        raise PlanError(path, "", "a campaign plan written by `bench submit` (no such file: was it submitted?)")
    text = read_text_file(path, PlanError)
    try:
        return Plan.model_validate_json(text)
    except ValidationError as exc:
        raise from_validation_error(PlanError, path, exc) from None
