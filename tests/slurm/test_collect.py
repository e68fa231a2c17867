"""The collector's view of each task: its records validated and matched, its Slurm state and its log."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.record.load import parse_record
from bench.slurm._cluster import TaskState
from bench.slurm.collect import collect, exit_status, render_json, render_text
from bench.slurm.plan import Plan, PlanTask, Submission

PROJECT = Path(__file__).resolve().parents[2]
TEMPLATE = PROJECT / "tests" / "fixtures" / "records" / "eagle-fast-verify" / "20261201T090000Z-baseline-a1b2c3d.json"
GROUP = "demo-{}-20261201T000000Z"


def write_record(
    folder: Path, variant: str, n: int, *, state: str = "complete", levels: int | None = None, **fields: Any
) -> Path:
    """A valid record of experiment ``demo`` written where bench run --records-dir ``folder`` would put it."""
    data = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    created = datetime(2026, 12, 1, tzinfo=UTC) + timedelta(minutes=n)
    data.update(
        id=f"{created:%Y%m%dT%H%M%SZ}-{variant}-{n:07x}",
        experiment="demo",
        variant=variant,
        created_at=created.isoformat().replace("+00:00", "Z"),
        run_group=GROUP.format(variant),
        status={"state": state, "message": f"{state} (record {n})"},
        **fields,
    )
    if levels is not None:
        data["levels"] = data["levels"][:levels]
    parse_record(data, "generated")
    path = folder / "demo" / f"{data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def make_plan(tmp_path: Path, variants: list[str], submissions: list[tuple[str, list[int]]]) -> Plan:
    return Plan(
        name="demo",
        campaign_file=str(tmp_path / "c.yaml"),
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        workdir=str(tmp_path),
        python="python3",
        results=str(tmp_path / "results"),
        tasks=[
            PlanTask(
                index=i, experiment="demo", variant=v, engine="testserver", repeat=0, config=f"configs/demo.{v}.yaml",
                run_group=GROUP.format(v),
            )
            for i, v in enumerate(variants)
        ],
        submissions=[
            Submission(
                number=k + 1, submitted_at=datetime(2026, 12, 1, tzinfo=UTC), array_job=job, tasks=tasks,
                array_script="a.sh", collector_script="c.sh",
            )
            for k, (job, tasks) in enumerate(submissions)
        ],
    )  # fmt: skip


def test_each_task_is_judged_by_its_own_valid_records(tmp_path: Path) -> None:
    variants = ["ok", "cut", "none", "broken", "stray", "retried", "queued"]
    plan = make_plan(tmp_path, variants, [("40", [0, 1, 2, 3, 4, 5]), ("41", [5, 6])])
    write_record(plan.records_dir(0), "ok", 0)
    write_record(plan.records_dir(1), "cut", 1, state="partial", levels=2)
    bad = plan.records_dir(3) / "demo" / "20261201T000000Z-broken-0000003.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"id": ', encoding="utf-8")
    write_record(plan.records_dir(4), "ok", 4)  # another variant's record in this task's folder
    write_record(plan.records_dir(5), "retried", 5, state="partial", levels=1)
    write_record(plan.records_dir(5), "retried", 6)
    states = {
        ("40", 0): TaskState("40", 0, "COMPLETED", "50", "0:0", "n1", "sacct"),
        ("40", 1): TaskState("40", 1, "CANCELLED", "51", "0:15", "n1", "sacct"),
        ("40", 2): TaskState("40", 2, "FAILED", "52", "1:0", "n2", "sacct"),
        ("41", 5): TaskState("41", 5, "COMPLETED", "60", "0:0", "n1", "sacct"),
        ("41", 6): TaskState("41", 6, "PENDING", None, None, None, "squeue"),
        ("40", 5): TaskState("40", 5, "CANCELLED", "55", "0:15", "n1", "sacct"),  # the first attempt: superseded
    }
    outcomes = collect(plan, states)
    assert [o.state for o in outcomes] == [
        "complete",
        "partial",
        "missing",
        "invalid",
        "invalid",
        "complete",
        "missing",
    ]
    assert [o.slurm_state for o in outcomes] == [
        "COMPLETED", "CANCELLED", "FAILED", "UNKNOWN", "UNKNOWN", "COMPLETED", "PENDING",
    ]  # fmt: skip
    assert outcomes[5].log == plan.folder / "logs" / "41_5.out"  # the latest attempt's log
    assert len(outcomes[5].complete) == 1 and len(outcomes[5].records) == 2
    assert "line 1 column 8" in outcomes[3].problems[0]
    assert "not this task's record: variant 'ok' (the task's is 'stray')" in outcomes[4].problems[0]
    assert exit_status(outcomes) == 1
    assert exit_status(outcomes[:1]) == 0

    text = render_text(plan, outcomes)
    listed = text.split("tasks without a complete record:")[1]
    for i in (1, 2, 3, 4, 6):
        assert f"task {i}: " in listed
    assert "task 0:" not in listed and "task 5:" not in listed
    assert f"task 1: partial; Slurm job 51 CANCELLED, exit 0:15; log {plan.folder}/logs/40_1.out" in listed
    assert f"task 2: missing; Slurm job 52 FAILED, exit 1:0; log {plan.folder}/logs/40_2.out" in listed
    assert "partial (record 1)" in listed

    data = json.loads(render_json(plan, outcomes))
    assert [t["state"] for t in data["tasks"]] == [o.state for o in outcomes]
    assert data["tasks"][1]["slurm"] == {
        "state": "CANCELLED", "array_job": "40", "job_id": "51", "exit_code": "0:15", "nodes": "n1", "source": "sacct",
    }  # fmt: skip


def test_a_task_never_submitted_says_so(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, ["a"], [])
    (outcome,) = collect(plan, {})
    assert (outcome.state, outcome.slurm_state, outcome.log) == ("missing", "NOT SUBMITTED", None)
