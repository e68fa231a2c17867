"""Sweeps against bench.testing.testserver: known truth, the crash path and no secret in a record (Ctrl-C, SIGTERM and
the other faults: test_faults.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.record.load import load_record
from bench.record.model import Level, Server
from bench.record.store import new_record_id
from bench.runner.config import RunConfig, load_config
from bench.runner.engines import get_engine
from bench.runner.event_loop import chosen_loop
from bench.runner.launcher import ServerProcess, free_port, group_alive
from bench.runner.prompts import load_prompt_set
from bench.runner.request import RequestResult
from bench.runner.sweep import create, finish_record, initial_record, make_specs, run_sweep
from bench.testing.testserver import TestServerConfig, expected_timing

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = """{"name": "tiny", "description": "test prompts", "license": "CC0-1.0", "source": "tests"}
{"id": "a", "messages": [{"role": "user", "content": "Write a function that adds two numbers."}]}
{"id": "b", "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Name a sort."}]}
"""
TTFT_MS, ITL_MS, PER_CHUNK, OUT_TOKENS = 100.0, 15.0, 3, 30
REL = 0.10  # timing tolerance relative to the schedule: long enough that a busy machine's jitter stays inside it


def _config(tmp_path: Path, **extra: Any) -> Path:
    (tmp_path / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
    data: dict[str, Any] = {
        "experiment": "sweep-test",
        "variant": "synthetic",
        "engine": "testserver",
        "server_args": {
            "ttft-ms": TTFT_MS,
            "itl-ms": ITL_MS,
            "tokens-per-chunk": PER_CHUNK,
            "output-tokens": OUT_TOKENS,
        },
        "prompt_set": str(tmp_path / "prompts.jsonl"),
        "levels": [1, 2, 4],
        "requests_per_level": "2x",
        "min_requests": 4,
        "warmup": "1x",
        "max_tokens": 64,
        "seed": 7,
        "records_dir": str(tmp_path / "records"),
    }
    data.update(extra)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    return path


def _bench(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
        check=False,
    )


def _only_record(tmp_path: Path) -> Path:
    files = sorted((tmp_path / "records").rglob("*.json"))
    assert len(files) == 1, files
    return files[0]


def _servers_on_port(port: int) -> list[int]:
    """Live bench.testing.testserver processes serving ``port`` (any process group)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if b"bench.testing.testserver" in cmd and str(port).encode() in cmd and stat.rsplit(") ", 1)[-1][0] != "Z":
            pids.append(int(entry.name))
    return pids


def test_sweep_matches_known_truth_and_validates(tmp_path: Path) -> None:
    proc = _bench(["run", str(_config(tmp_path)), "--log-dir", str(tmp_path / "logs")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = _only_record(tmp_path)
    assert str(path) in proc.stdout
    record = load_record(path).record  # validates schema and layout
    assert record.status.state == "complete"
    assert record.provenance.kind == "measured" and record.provenance.test_server is True
    assert record.provenance.tool and record.provenance.tool.startswith("benchbook ")
    assert [lv.concurrency for lv in record.levels] == [1, 2, 4]
    assert record.workload.planned_levels == [1, 2, 4]
    assert record.workload.prompt_set == "tiny" and record.workload.prompt_set_hash
    assert record.workload.num_prompts == 2 and record.workload.seed == 7 and record.workload.api == "chat"
    assert record.server.command and "bench.testing.testserver" in record.server.command
    assert record.server.args["tokens-per-chunk"] == PER_CHUNK
    assert record.server.server_info is not None
    truth = expected_timing(
        TestServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS, tokens_per_chunk=PER_CHUNK, output_tokens=OUT_TOKENS), 64
    )
    for lv, requests, warm in zip(record.levels, (4, 4, 8), (1, 2, 4), strict=True):
        assert lv.requests_sent == requests and lv.requests_completed == requests and lv.requests_failed == 0
        assert lv.warmup_requests == warm
        assert lv.output_tokens is not None and lv.output_tokens.total == requests * truth.output_tokens
        assert lv.ttft_ms is not None and lv.ttft_ms.p50 is not None
        assert lv.ttft_ms.min is not None and lv.ttft_ms.min >= truth.ttft_ms  # never before the schedule allows
        assert lv.ttft_ms.p50 == pytest.approx(truth.ttft_ms, rel=REL)
        assert lv.tpot_ms is not None and lv.tpot_ms.p50 is not None and truth.tpot_ms is not None
        assert lv.tpot_ms.p50 == pytest.approx(truth.tpot_ms, rel=REL)
        assert lv.errors is None or not lv.errors.flagged
    assert not (ROOT / "records" / "sweep-test").exists()
    for lv, requests, warm in zip(record.levels, (4, 4, 8), (1, 2, 4), strict=True):
        # the client's own load is recorded: every token event of measured and warm-up requests
        chunks_per_request = -(-OUT_TOKENS // PER_CHUNK)
        assert lv.client is not None and lv.client.token_events == (requests + warm) * chunks_per_request
        assert lv.client.wall_s > 0 and lv.client.cpu_percent >= 0
        assert lv.client.event_loop == chosen_loop()


def test_repeat_writes_records_sharing_a_fresh_run_group(tmp_path: Path) -> None:
    cfg = _config(tmp_path, levels=[1], requests_per_level=2, min_requests=1, warmup=0, run_group="grp")
    proc = _bench(["run", str(cfg), "--repeat", "2", "--log-dir", str(tmp_path / "logs")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [load_record(p).record for p in sorted((tmp_path / "records").rglob("*.json"))]
    assert len(records) == 2 and records[0].id != records[1].id
    assert records[0].run_group == records[1].run_group
    assert records[0].run_group is not None and records[0].run_group.startswith("grp-")
    again = _bench(["run", str(cfg), "--log-dir", str(tmp_path / "logs")])
    assert again.returncode == 0, again.stdout + again.stderr
    groups = {load_record(p).record.run_group for p in (tmp_path / "records").rglob("*.json")}
    assert len(groups) == 2  # a later invocation is not pooled with the earlier repeats


def test_server_killed_mid_sweep_keeps_finished_levels(tmp_path: Path) -> None:
    cfg: RunConfig = load_config(_config(tmp_path, levels=[1, 2, 4], requests_per_level=6, warmup=0))
    engine = get_engine("testserver")
    prompt_set = load_prompt_set(cfg.prompt_set)
    port = free_port()
    command = engine.command(cfg, "127.0.0.1", port)
    assert command is not None
    created = datetime.now(UTC).replace(microsecond=0)
    record = initial_record(
        cfg=cfg,
        record_id=new_record_id(cfg.variant, created),
        created_at=created,
        prompt_set=prompt_set,
        server=Server(engine=engine.name, command=command),
        model=engine.model_ref(cfg),
        speculative=None,
        environment=__import__("bench.record.model", fromlist=["Environment"]).Environment(),
        benchbook=__import__("bench.record.model", fromlist=["Benchbook"]).Benchbook(),
        test_server=True,
    )
    state = create(Path(cfg.records_dir), record)
    assert load_record(state.path).record.status.state == "partial"  # on disk before any request

    class KillDuringLevel2:
        def __init__(self, server: ServerProcess) -> None:
            self.server, self.level, self.seen = server, 0, 0

        def start_level(self, concurrency: int, requests: int, warmup: int) -> None:
            self.level, self.seen = concurrency, 0

        def on_result(self, result: RequestResult) -> None:
            self.seen += 1
            if self.level == 2 and self.seen == 2:
                os.killpg(self.server.pgid or 0, signal.SIGKILL)

        def end_level(self, level: Level | None) -> None:
            pass

    server = ServerProcess(command, log_path=tmp_path / "server.log")
    with server:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            server.wait_ready(lambda: engine.is_ready(http), timeout_s=30)
        final = asyncio.run(
            run_sweep(
                state,
                cfg,
                prompt_set,
                base_url=f"http://127.0.0.1:{port}",
                server=server,
                progress=KillDuringLevel2(server),
            )
        )
        pgid = server.pgid
    assert pgid is not None and not group_alive(pgid)
    assert not _servers_on_port(port)
    on_disk = load_record(state.path).record
    assert on_disk == final
    assert on_disk.status.state == "partial"
    # level 1 is valid; level 2 had sent requests when the server died: kept, marked failed, never compared
    assert [(lv.concurrency, lv.failed) for lv in on_disk.levels] == [(1, False), (2, True)]
    stopped = on_disk.levels[1]
    assert stopped.failure is not None and stopped.failure.startswith("stopped before its end: the server process")
    assert stopped.requests_sent == (stopped.requests_completed or 0) + (stopped.requests_failed or 0) >= 2
    assert on_disk.status.failed_level == 2
    message = on_disk.status.message or ""
    assert "level C=2" in message and "killed by signal SIGKILL" in message
    assert on_disk.status.log_excerpt is not None


def test_failed_when_no_level_finished() -> None:
    from bench.record.load import parse_record

    raw = json.loads((ROOT / "records" / "eagle-fast-verify").glob("*baseline*.json").__next__().read_text())
    rec = parse_record({**raw, "levels": []}, "x")
    done = finish_record(rec, error="server gone", log_excerpt="tail")
    assert done.status.state == "failed" and done.status.message == "server gone"
    ok = finish_record(parse_record(raw, "x"))
    assert ok.status.state == "complete"


def test_make_specs_cycles_prompts(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, api="completions", max_tokens=9, ignore_eos=True, prefix="repeated"))
    ps = load_prompt_set(cfg.prompt_set)
    specs = make_specs(ps, 5, cfg, offset=1)
    assert [s.prompt for s in specs] == [ps.prompts[(1 + i) % 2].text for i in range(5)]
    assert all(s.max_tokens == 9 and s.ignore_eos and s.seed == 7 and s.api == "completions" for s in specs)


def test_secrets_never_reach_the_record(tmp_path: Path) -> None:
    secrets = {
        "HF_TOKEN": "hf_FAKEsecretVALUE1234567890abcdef",
        "OPENAI_API_KEY": "sk-FAKEopenaiKEY0987654321zyxwv",
        "AWS_SECRET_ACCESS_KEY": "FAKEawsSECRETaccessKEY/abc+123xyz",
        "NCCL_IB_HCA": "mlx5_0",  # allow-listed: must be recorded
    }
    env = {**os.environ, **secrets}
    proc = _bench(
        [
            "run",
            str(_config(tmp_path)),
            "--levels",
            "1",
            "--log-dir",
            str(tmp_path / "logs"),
            "--set",
            "server_env.SGLANG_API_KEY=sk-FAKEserverENVkey555",
        ],
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = _only_record(tmp_path).read_text(encoding="utf-8")
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        assert secrets[name] not in text, name
    assert "sk-FAKEserverENVkey555" not in text
    assert '"NCCL_IB_HCA": "mlx5_0"' in text


def test_attach_with_url_launches_nothing(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "bench.testing.testserver", "--port", str(port), "--ttft-ms", "5", "--itl-ms", "1"]
    with ServerProcess(command, log_path=tmp_path / "external.log") as external:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            external.wait_ready(lambda: get_engine("testserver").is_ready(http), timeout_s=30)
        proc = _bench(["run", str(_config(tmp_path)), "--levels", "1", "--url", f"http://127.0.0.1:{port}"])
        assert external.is_alive()  # attached, not owned: left running
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = load_record(_only_record(tmp_path)).record
    assert record.server.url == f"http://127.0.0.1:{port}" and record.server.command is None
    assert record.status.state == "complete" and [lv.concurrency for lv in record.levels] == [1]


def test_unreachable_url_gives_failed_record(tmp_path: Path) -> None:
    port = free_port()
    proc = _bench(["run", str(_config(tmp_path)), "--url", f"http://127.0.0.1:{port}"])
    assert proc.returncode == 1
    record = load_record(_only_record(tmp_path)).record
    assert record.status.state == "failed" and "not ready" in (record.status.message or "")
