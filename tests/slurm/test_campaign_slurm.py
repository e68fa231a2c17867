"""Campaigns end to end on a real one-node Slurm cluster (started by the session fixture ``slurm``).

Each test submits with ``bench submit`` from a user's repository, waits for the job array and the collector job,
then checks what arrived: the records (valid, complete, with the task's Slurm facts), the collector's commit on
a branch (the user's checkout untouched) and the review gate run on that branch as CI runs it. The test server
measures with known timing; the llama.cpp test runs the real CPU llama-server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from slurm_cluster import PARTITION, SlurmCluster
from slurm_repo import GIT_ENV, PROJECT, Repo, project_repo

from bench.record.load import load_record, load_records
from bench.record.model import Record
from bench.slurm.plan import Plan, read_plan

TS_CONFIG = """\
experiment: slurm-e2e
variant: ts
engine: testserver
server_args: {ttft-ms: 5, itl-ms: 2, output-tokens: 8}
prompt_set: coding-agentic
levels: [1, 2]
requests_per_level: 4
warmup: 0
max_tokens: 8
"""


def _bench(cluster: SlurmCluster, cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full_env = {**cluster.env, **GIT_ENV, "PYTHONPATH": str(PROJECT), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _campaign(folder: Path, text: str, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8")
    path = folder / "campaign.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _wait_all(cluster: SlurmCluster, plan: Plan, timeout: float = 300) -> None:
    jobs = [j for s in plan.submissions for j in (s.array_job, s.collector_job) if j]
    cluster.wait_jobs(*jobs, timeout=timeout)


def _records(plan: Plan, index: int) -> list[Record]:
    loaded = load_records(plan.records_dir(index))
    assert not loaded.errors, loaded.errors
    return [r.record for r in loaded.records]


def _collector_log(plan: Plan) -> str:
    sub = plan.submissions[-1]
    return (plan.folder / "logs" / f"collect_{sub.collector_job}.out").read_text(encoding="utf-8")


def _secret_fields(reason: str) -> list[str] | None:
    m = re.search(r"looks like a secret in [0-9]+ field\(s\): (.+?)\. Records are public", reason)
    return [f.strip() for f in m.group(1).split(",")] if m else None


KNOWN_FALSE_SECRETS = re.compile(
    r"^(server\.server_info\.props\.media_marker|levels\[\d+\]\.speculative\.missing\[\d+\])$"
)


def _gate(repo: Repo, branch: str, tmp_path: Path, *, full: bool = False) -> dict[str, Any]:
    """The review gate on ``branch``, checked out fresh as CI does (a clone; PR_CHECK_COMMITTED_ONLY=1): its
    JSON report (``bench check --format json``; with ``full``, ``scripts/pr_check.sh``'s report.json)."""
    clone = tmp_path / f"ci-{branch.replace('/', '-')}"
    subprocess.run(["git", "clone", "-q", "-b", branch, str(repo.root), str(clone)], check=True, capture_output=True)
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(PROJECT)}
    out = tmp_path / "pr"
    if full:
        env |= {"BENCHBOOK_PY": sys.executable, "PR_CHECK_OUT": str(out), "PR_CHECK_COMMITTED_ONLY": "1"}
        argv = ["bash", str(clone / "scripts" / "pr_check.sh")]
    else:
        out.mkdir()
        argv = [sys.executable, "-m", "bench", "check", "--repo", str(clone), "--format", "json"]
        argv += ["--report", str(out / "report.json")]
    done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    if done.returncode != 0:
        flagged = [_secret_fields(fail["reason"]) for fail in report["failures"]]
        if flagged and all(fields and all(KNOWN_FALSE_SECRETS.match(f) for f in fields) for fields in flagged):
            pytest.xfail(
                "everything else passed; the gate (main) refuses llama-server records for llama.cpp's per-start "
                f"random media_marker and the speculative 'missing' note, read as secrets: {flagged}"
            )
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["ok"] and not report["failures"], report["failures"]
    return report


def _committed(repo: Repo, branch: str, plan: Plan, records: list[Record], paths: list[Path]) -> None:
    """The branch is main plus exactly these records, byte for byte."""
    main = repo.git("rev-parse", "main").strip()
    assert repo.git("rev-parse", f"{branch}^").strip() == main
    added = sorted(line for line in repo.git("diff", "--name-status", main, branch).splitlines())
    assert added == sorted(f"A\trecords/{r.experiment}/{r.id}.json" for r in records)
    for r, path in zip(records, paths, strict=True):
        blob = subprocess.run(
            ["git", "show", f"{branch}:records/{r.experiment}/{r.id}.json"], cwd=repo.root, capture_output=True
        ).stdout
        assert blob == path.read_bytes()


def test_a_test_server_campaign_arrives_as_records_on_a_branch_the_gate_accepts(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    repo = project_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "-b", "work")
    (repo.root / "draft.md").write_text("the user's own work in progress\n", encoding="utf-8")
    repo.git("add", "draft.md")
    before = repo.state()
    camp = _campaign(
        tmp_path / "camp",
        f"""\
        name: ts
        config: ts.yaml
        matrix:
          server_args.itl-ms: [2, 6]
        repeats: 2
        results: results
        commit: campaign/ts
        slurm: {{partition: {PARTITION}, time: "00:10:00"}}
        """,
        **{"ts.yaml": TS_CONFIG},
    )
    results = tmp_path / "camp" / "results"
    queue_before = slurm.run("squeue", "-h", "-o", "%i").stdout
    dry = _bench(slurm, repo.root, "submit", str(camp), "--dry-run")
    assert "#SBATCH --array=0-3" in dry and f"#SBATCH --partition={PARTITION}" in dry
    assert len(re.findall(r"^  [0-3]\) run ", dry, re.MULTILINE)) == 4
    assert "--dependency=afterany:<array job>" in dry and "--commit campaign/ts" in dry
    assert not results.exists() and slurm.run("squeue", "-h", "-o", "%i").stdout == queue_before  # nothing submitted

    out = _bench(slurm, repo.root, "submit", str(camp))
    plan = read_plan(results)
    sub = plan.submissions[0]
    assert f"array job {sub.array_job}" in out and sub.collector_job is not None and sub.tasks == [0, 1, 2, 3]
    _wait_all(slurm, plan)

    records: list[Record] = []
    paths: list[Path] = []
    for task in plan.tasks:
        (rec,) = _records(plan, task.index)
        assert rec.status.state == "complete", rec.status
        assert (rec.variant, rec.run_group) == (task.variant, task.run_group)
        env = rec.environment.env_vars
        assert env["SLURM_ARRAY_JOB_ID"] == sub.array_job and env["SLURM_ARRAY_TASK_ID"] == str(task.index)
        assert env["SLURM_JOB_PARTITION"] == PARTITION and env["SLURM_JOB_NODELIST"] == slurm.node
        assert env["SLURM_VERSION"] == slurm.version and env["SLURM_JOB_ID"].isdigit()
        assert "SLURM_JOB_USER" not in env and "SLURM_SUBMIT_DIR" not in env
        itl = 2 if task.variant.endswith("-2") else 6  # the matrix value reached the server: TPOT is its ITL
        tpot = rec.levels[0].tpot_ms
        assert tpot is not None and tpot.p50 is not None and abs(tpot.p50 - itl) < 1.0, (task.variant, tpot)
        records.append(rec)
        paths.append(next(plan.records_dir(task.index).rglob("*.json")))
    assert len({r.environment.env_vars["SLURM_JOB_ID"] for r in records}) == 4  # one job per task
    assert records[0].run_group == records[1].run_group != records[2].run_group == records[3].run_group

    log = _collector_log(plan)
    assert "4 task(s): 4 complete" in log and "committed 4 record(s) on campaign/ts" in log
    _committed(repo, "campaign/ts", plan, records, paths)
    assert repo.state() == before  # the user's branch, index, staged file and work tree: untouched
    report = _gate(repo, "campaign/ts", tmp_path)
    assert sorted(report["added_files"]) == sorted(f"records/{r.experiment}/{r.id}.json" for r in records)

    status = json.loads(_bench(slurm, repo.root, "submit", "--status", str(camp), "--format", "json"))
    assert [t["state"] for t in status["tasks"]] == ["complete"] * 4
    assert {t["slurm"]["state"] for t in status["tasks"]} == {"COMPLETED"}


def _wait_for_levels(folder: Path, levels: int, timeout: float = 180) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in folder.rglob("*.json"):
            try:
                data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if len(data.get("levels", [])) >= levels:
                return path
        time.sleep(0.2)
    raise TimeoutError(f"no record with {levels} level(s) under {folder}")


def _servers_on(port: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "bench.testing.testserver" in cmd and f"--port {port} " in cmd + " ":
                found.append(cmd)
    return found


def test_attach_scancel_keeps_finished_levels_and_resume_reruns_only_that_task(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    repo = project_repo(tmp_path / "repo")
    camp = _campaign(
        tmp_path / "camp",
        f"""\
        name: att
        config: ts.yaml
        matrix:
          - {{variant: short, max_tokens: 4}}
          - {{variant: long, max_tokens: 40}}
        results: results
        server:
          command: [{sys.executable}, -m, bench.testing.testserver, --port, "{{port}}", --ttft-ms, "5", --itl-ms, "250",
                    --output-tokens, "64", --pause-file, "{tmp_path}/pause-{{port}}"]
          ready_timeout_s: 60
        slurm: {{partition: {PARTITION}}}
        """,
        **{"ts.yaml": TS_CONFIG.replace("requests_per_level: 4", "requests_per_level: 3")},
    )
    _bench(slurm, repo.root, "submit", str(camp))
    plan = read_plan(tmp_path / "camp" / "results")
    first = plan.submissions[0]
    # the long task finished level C=1; its server is paused (no further token) before its level C=2 (~20 s: 40 tokens
    # 250 ms apart, twice) can end, so the scancel lands in that level however long Slurm takes to deliver it (on 2
    # busy cores it once took longer than the level, when the level was only timed)
    record_path = _wait_for_levels(plan.records_dir(1), 1)
    port = int(json.loads(record_path.read_text(encoding="utf-8"))["server"]["url"].rsplit(":", 1)[1])
    pause = tmp_path / f"pause-{port}"
    pause.touch()
    slurm.run("scancel", f"{first.array_job}_1")
    _wait_all(slurm, plan)
    pause.unlink()

    cut = load_record(record_path).record
    assert cut.status.state == "partial" and cut.status.failed_level == 2, cut.status
    assert "(received SIGTERM) during level C=2" in (cut.status.message or ""), cut.status
    finished, *cut_short = cut.levels
    assert finished.concurrency == 1 and finished.requests_completed == 3 and finished.failure is None  # it is kept
    # scancel signals every process of the task, in an order Slurm chooses. When the harness's signal is handled
    # first, the level it cut is dropped; when the server's exit reaches the harness first, that level's requests
    # fail (streams closed, connections refused) and it is kept as a failed level, like any level a vanished server
    # cut short: never as a measured one (seen once in CI and once in 7 local runs)
    if cut_short:
        (level2,) = cut_short
        assert level2.concurrency == 2 and level2.requests_completed == 0 and level2.failure is not None, level2
        assert set(level2.errors.by_kind) <= {"stream_broken", "connect"} and level2.errors.flagged, level2.errors
    assert cut.server.command is None and cut.provenance.test_server  # attached to the campaign's server
    assert int(str(cut.server.url).rsplit(":", 1)[1]) == port
    assert _servers_on(port) == []  # the campaign's server was stopped with the task
    (short,) = _records(plan, 0)
    assert short.status.state == "complete"
    short_file = next(plan.records_dir(0).rglob("*.json"))
    short_stamp = short_file.stat().st_mtime_ns

    status = json.loads(_bench(slurm, repo.root, "submit", "--status", str(camp), "--format", "json"))
    task1 = status["tasks"][1]
    assert task1["state"] == "partial" and task1["slurm"]["state"] == "CANCELLED"
    assert task1["log"] == str(plan.folder / "logs" / f"{first.array_job}_1.out")
    assert "received SIGTERM" in Path(task1["log"]).read_text(encoding="utf-8")
    log = _collector_log(plan)
    assert re.search(rf"task 1: partial; Slurm job [0-9]+ CANCELLED, exit [0-9:]+; log {re.escape(task1['log'])}", log)

    out = _bench(slurm, repo.root, "submit", "--resume", str(camp))
    plan = read_plan(plan.folder)
    second = plan.submissions[1]
    assert "resubmitted 1 task(s) (1)" in out and second.tasks == [1]
    assert "#SBATCH --array=1\n" in Path(second.array_script).read_text(encoding="utf-8")
    _wait_all(slurm, plan)
    rerun = sorted(_records(plan, 1), key=lambda r: r.created_at)
    assert [r.status.state for r in rerun] == ["partial", "complete"]
    assert rerun[1].run_group == cut.run_group  # the rerun joins its repeat group
    assert rerun[1].environment.env_vars["SLURM_ARRAY_JOB_ID"] == second.array_job
    assert [p for p in plan.records_dir(0).rglob("*.json")] == [short_file]  # task 0 did not run again
    assert short_file.stat().st_mtime_ns == short_stamp
    assert "2 task(s): 2 complete" in _collector_log(plan)


def _pids_with(*parts: str) -> list[int]:
    """Processes whose command line contains every part."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if all(p in cmd for p in parts):
                found.append(int(entry.name))
    return found


def test_a_harness_killed_without_warning_keeps_its_finished_levels(slurm: SlurmCluster, tmp_path: Path) -> None:
    """SIGKILL to bench run with no SIGTERM first, as when its node dies: the record written after the last
    finished level stays, partial. (``scancel --signal=KILL`` is a plain cancel: Slurm sends SIGTERM first.)"""
    repo = project_repo(tmp_path / "repo")
    slow = TS_CONFIG.replace("itl-ms: 2", "itl-ms: 60").replace("requests_per_level: 4", "requests_per_level: 3")
    camp = _campaign(
        tmp_path / "camp",
        f"name: kill\nconfigs: [ts.yaml]\nresults: results\nset: {{max_tokens: 40}}\n"
        f"slurm: {{partition: {PARTITION}}}\n",
        **{"ts.yaml": slow},
    )
    _bench(slurm, repo.root, "submit", str(camp))
    plan = read_plan(tmp_path / "camp" / "results")
    record_path = _wait_for_levels(plan.records_dir(0), 1)
    (harness,) = _pids_with("-m bench run", f"{plan.folder}/tasks/0 ")
    os.kill(harness, signal.SIGKILL)
    _wait_all(slurm, plan)
    rec = load_record(record_path).record
    assert rec.status.state == "partial" and rec.status.message == "running: 1 level(s) finished", rec.status
    assert [lv.concurrency for lv in rec.levels] == [1]
    status = json.loads(_bench(slurm, repo.root, "submit", "--status", str(camp), "--format", "json"))
    task = status["tasks"][0]
    assert task["state"] == "partial" and (task["slurm"]["state"], task["slurm"]["exit_code"]) == ("FAILED", "0:9")
    # The harness had no chance to stop its server. Under proctrack/cgroup Slurm ends every process of the job;
    # this cluster's proctrack/linuxproc loses a re-parented process, so the test stops the server it caused.
    for pid in _pids_with("bench.testing.testserver", f"--port {str(rec.server.url).rsplit(':', 1)[1]} "):
        os.kill(pid, signal.SIGKILL)


def _llama_server() -> str:
    cached = Path.home() / ".cache" / "benchbook" / "llama-server" / "0.3.36-cpu" / "bin" / "llama-server"
    path = os.environ.get("BENCHBOOK_LLAMA_SERVER") or (str(cached) if cached.is_file() else "")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"llama-server not found: set BENCHBOOK_LLAMA_SERVER (default cache: {cached})", pytrace=False)
    return path


@pytest.mark.engine
def test_a_llama_server_campaign_passes_the_pr_check(slurm: SlurmCluster, tmp_path: Path) -> None:
    repo = project_repo(tmp_path / "repo", site=True)
    configs = PROJECT / "bench" / "configs" / "llamacpp-smoke"
    camp = _campaign(
        tmp_path / "camp",
        f"""\
        name: llama
        configs: [{configs / "baseline.yaml"}, {configs / "ngram.yaml"}]
        set: {{levels: [1, 2], requests_per_level: 2, min_requests: 2, warmup: 0, max_tokens: 8}}
        repeats: 2
        results: results
        commit: campaign/llama
        slurm: {{partition: {PARTITION}, cpus_per_task: {slurm.cpus}, time: "00:15:00"}}
        """,
    )
    _bench(slurm, repo.root, "submit", str(camp), env={"BENCHBOOK_LLAMA_SERVER": _llama_server()})
    plan = read_plan(tmp_path / "camp" / "results")
    _wait_all(slurm, plan, timeout=600)
    records, paths = [], []
    for task in plan.tasks:
        (rec,) = _records(plan, task.index)
        assert rec.status.state == "complete", (task, rec.status)
        assert rec.server.engine == "llama.cpp" and [lv.concurrency for lv in rec.levels] == [1, 2]
        assert all(lv.output_tokens is not None and lv.output_tokens.source == "server_usage" for lv in rec.levels)
        assert (rec.speculative is not None) == (task.variant == "ngram")
        assert rec.environment.env_vars["SLURM_ARRAY_TASK_ID"] == str(task.index)
        records.append(rec)
        paths.append(next(plan.records_dir(task.index).rglob("*.json")))
    assert "committed 4 record(s) on campaign/llama" in _collector_log(plan)
    _committed(repo, "campaign/llama", plan, records, paths)
    report = _gate(repo, "campaign/llama", tmp_path, full=True)  # bench check, strict site build, offline check
    assert sorted(report["added_files"]) == sorted(f"records/{r.experiment}/{r.id}.json" for r in records)
    assert (tmp_path / "pr" / "site" / "index.html").is_file()
