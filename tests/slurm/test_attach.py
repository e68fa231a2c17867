"""Attach mode outside Slurm: the wrapper starts the campaign's server, runs bench run against it, stops it."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from bench.record.load import load_records
from bench.slurm.campaign import ServerOptions
from bench.slurm.plan import Plan, write_plan

PROJECT = Path(__file__).resolve().parents[2]
CONFIG = """\
experiment: attach
variant: a
engine: testserver
prompt_set: coding-agentic
levels: [1]
requests_per_level: 2
warmup: 0
max_tokens: 4
"""


def _attach(tmp_path: Path, command: list[str]) -> tuple[subprocess.CompletedProcess[str], Path]:
    plan = Plan(
        name="attach",
        campaign_file=str(tmp_path / "c.yaml"),
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        workdir=str(tmp_path),
        python=sys.executable,
        results=str(tmp_path / "results"),
        server=ServerOptions(command=command, ready_timeout_s=20),
        tasks=[],
    )
    write_plan(plan)
    config = tmp_path / "a.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    records = tmp_path / "results" / "tasks" / "0"
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "SLURM_ARRAY_JOB_ID": "77", "SLURM_ARRAY_TASK_ID": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.slurm.attach", str(tmp_path / "results" / "campaign.json"), str(config),
         "--records-dir", str(records), "--run-group", "attach-a-1"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    return done, records


def test_attach_measures_the_campaigns_server_and_stops_it(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "bench.testing.testserver",
        "--port",
        "{port}",
        "--itl-ms",
        "3",
        "--output-tokens",
        "4",
    ]
    done, records = _attach(tmp_path, command)
    assert done.returncode == 0, done.stdout + done.stderr
    (loaded,) = load_records(records).records
    rec = loaded.record
    assert rec.status.state == "complete" and rec.run_group == "attach-a-1"
    assert rec.server.command is None and rec.provenance.test_server  # attached, to the test server
    port = rec.server.url.rsplit(":", 1)[1]
    log = tmp_path / "results" / "logs" / "server" / "77_0.log"
    assert f"listening on http://127.0.0.1:{port}" in log.read_text(encoding="utf-8")
    assert f"server ready at http://127.0.0.1:{port}" in done.stdout
    left = subprocess.run(["pgrep", "-f", f"bench.testing.testserver --port {port} "], capture_output=True, check=False)
    assert left.stdout == b""  # stopped


def test_a_server_that_never_answers_leaves_a_failed_record_saying_why(tmp_path: Path) -> None:
    done, records = _attach(tmp_path, [sys.executable, "-c", "import sys; sys.exit(3)", "{port}"])
    assert done.returncode == 1
    assert "server not ready" in done.stderr and "exited with status 3" in done.stderr
    (loaded,) = load_records(records).records
    assert loaded.record.status.state == "failed"
    assert "is not ready" in (loaded.record.status.message or "")
