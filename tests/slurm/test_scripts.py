"""The sbatch scripts: array specs, the options they carry, and what each task line runs (in a real bash)."""

from __future__ import annotations

import os
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bench.slurm._cluster import expand_indices
from bench.slurm._scripts import array_script, array_spec, collector_script, sbatch_options
from bench.slurm.campaign import Campaign, ServerOptions, SlurmOptions
from bench.slurm.plan import Plan, PlanTask


@given(st.sets(st.integers(min_value=0, max_value=4000), max_size=60))
def test_array_spec_round_trips_through_slurms_syntax(indices: set[int]) -> None:
    spec = array_spec(indices)
    assert expand_indices(spec) == sorted(indices)
    assert len(spec.split(",")) <= len(indices) or not indices  # runs are compressed


def test_array_spec_compresses_runs() -> None:
    assert array_spec([7, 0, 1, 2, 5, 8]) == "0-2,5,7-8"
    assert expand_indices("3-9:3%2") == [3, 6, 9]


def test_every_slurm_option_becomes_its_sbatch_flag() -> None:
    opts = SlurmOptions.model_validate(
        {
            "partition": "gpu",
            "account": "team",
            "time": "1-02:00:00",
            "nodes": 1,
            "gres": "gpu:h200:8",
            "gpus": 8,
            "cpus_per_task": 16,
            "mem": "200G",
            "constraint": "h200",
            "signal": "B:TERM@300",
            "extra": ["--exclusive", "--qos=high"],
        }
    )
    assert sbatch_options(opts) == [
        "--partition=gpu", "--account=team", "--time=1-02:00:00", "--nodes=1", "--gres=gpu:h200:8", "--gpus=8",
        "--cpus-per-task=16", "--mem=200G", "--constraint=h200", "--signal=B:TERM@300", "--exclusive", "--qos=high",
    ]  # fmt: skip


def _plan(tmp_path: Path, python: str, server: ServerOptions | None = None) -> Plan:
    return Plan(
        name="demo",
        campaign_file=str(tmp_path / "c.yaml"),
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        workdir=str(tmp_path),
        repo=str(tmp_path / "repo"),
        python=python,
        results=str(tmp_path / "results"),
        server=server,
        tasks=[
            PlanTask(
                index=i, experiment="e", variant=v, engine="testserver", repeat=r, config=f"configs/e.{v}.yaml",
                run_group=f"demo-{v}-20261201T000000Z",
            )
            for i, (v, r) in enumerate([("a", 0), ("a", 1), ("b", 0), ("b", 1)])
        ],
    )  # fmt: skip


def _run_task(script: str, tmp_path: Path, index: int) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "array.sh"
    path.write_text(script, encoding="utf-8")
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(index), "SLURM_VERSION": "test"}
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, env=env, check=False, timeout=30)


def _fake_python(tmp_path: Path) -> str:
    """Stands in for the interpreter: prints the arguments it was given, one per line."""
    fake = tmp_path / "fake python"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', encoding="utf-8")
    fake.chmod(0o755)
    return str(fake)


def test_each_array_task_runs_its_own_bench_run(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _fake_python(tmp_path))
    script = array_script(plan, SlurmOptions(partition="p", max_parallel=2), [1, 2, 3])
    assert "#SBATCH --array=1-3%2" in script
    assert f"#SBATCH --output={tmp_path}/results/logs/%A_%a.out" in script
    assert f"#SBATCH --chdir={tmp_path}" in script and "#SBATCH --partition=p" in script
    results = f"{tmp_path}/results"
    done = _run_task(script, tmp_path, 2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "-m", "bench", "run", f"{results}/configs/e.b.yaml", "--records-dir", f"{results}/tasks/2",
        "--log-dir", f"{results}/logs/server", "--run-group", "demo-b-20261201T000000Z",
    ]  # fmt: skip
    done = _run_task(script, tmp_path, 0)  # submitted tasks only: 0 is not in this array
    assert done.returncode == 2 and "task 0 is not part of campaign demo" in done.stderr


def test_attach_tasks_go_through_the_attach_wrapper(tmp_path: Path) -> None:
    server = ServerOptions(command=["srv", "--port", "{port}"])
    plan = _plan(tmp_path, _fake_python(tmp_path), server)
    done = _run_task(array_script(plan, SlurmOptions(), [0]), tmp_path, 0)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        "-m", "bench.slurm.attach", f"{tmp_path}/results/campaign.json", f"{tmp_path}/results/configs/e.a.yaml",
    ]  # fmt: skip


def test_collector_script_commits_into_the_submitting_repository(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "/venv/bin/python")
    campaign = Campaign.model_validate({"name": "demo", "configs": ["x.yaml"], "slurm": {"partition": "gpu"}})
    text = collector_script(plan, campaign.slurm, commit="campaign/demo")
    assert "#SBATCH --partition=gpu" in text and "#SBATCH --time=00:30:00" in text
    assert "#SBATCH --gres" not in text  # the collector asks for no GPUs
    exec_line = next(line for line in text.splitlines() if line.startswith("exec "))
    assert shlex.split(exec_line)[1:] == [
        "/venv/bin/python", "-m", "bench", "collect", f"{tmp_path}/results",
        "--commit", "campaign/demo", "--repo", f"{tmp_path}/repo",
    ]  # fmt: skip
    assert "--commit" not in collector_script(plan, campaign.slurm, commit=None)
