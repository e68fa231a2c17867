"""Attached runs end to end (``bench run CONFIG --url``): the server is asked what it is before anything is
measured, against the test server and against a stand-in serving SGLang 0.5.17's real info endpoints."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sglang_standin import sglang_standin, url_of

from bench.record.load import load_record
from bench.record.model import Record
from bench.runner.engines import get_engine
from bench.runner.launcher import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
EAGLE3 = ROOT / "bench" / "configs" / "eagle-fast-verify" / "eagle3.yaml"
SMALL = ["--levels", "1", "--requests", "2", "--warmup", "0", "--max-tokens", "8"]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def _records(root: Path) -> list[Record]:
    return [load_record(p).record for p in sorted(root.rglob("*.json"))]


@pytest.fixture(scope="module")
def test_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("ts") / "server.log"
    command = [sys.executable, "-m", "bench.testing.testserver", "--port", str(port), "--ttft-ms", "2", "--itl-ms", "1"]
    with ServerProcess(command, log_path=log) as server:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            server.wait_ready(lambda: get_engine("testserver").is_ready(http), timeout_s=30)
        yield f"http://127.0.0.1:{port}"


def test_eagle3_config_attached_to_the_test_server_is_refused(test_server: str, tmp_path: Path) -> None:
    proc = _bench("run", str(EAGLE3), "--url", test_server, "--records-dir", str(tmp_path / "records"), *SMALL)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not (tmp_path / "records").exists()  # no record file, not even a failed one
    err = proc.stderr
    assert "nothing was measured and no record was written" in err
    assert "server.engine: config 'sglang', server 'benchbook-testserver' (x-benchbook-test-server header)" in err
    assert "model: config 'meta-llama/Llama-3.1-8B-Instruct', server 'benchbook-testserver' (/v1/models)" in err
    assert "speculative.algorithm: config 'EAGLE3', server none" in err
    assert "draft_model: config 'lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B', server none" in err
    assert "--allow-mismatch" in err


def test_allow_mismatch_keeps_both_values_and_states_the_servers(test_server: str, tmp_path: Path) -> None:
    proc = _bench(
        "run", str(EAGLE3), "--url", test_server, "--records-dir", str(tmp_path / "r"), "--allow-mismatch", *SMALL
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mismatch kept (--allow-mismatch): server.engine" in proc.stdout
    (record,) = _records(tmp_path / "r")
    assert record.provenance.kind == "measured" and record.provenance.test_server is True
    kept = {m.field: (m.claimed, m.observed) for m in record.mismatches}
    assert kept == {
        "server.engine": ("sglang", "benchbook-testserver"),
        "model": ("meta-llama/Llama-3.1-8B-Instruct", "benchbook-testserver"),
        "speculative.algorithm": ("EAGLE3", None),
        "draft_model": ("lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", None),
    }
    # the main fields never present the config's value as fact
    assert record.server.engine == "benchbook-testserver" and record.model.name == "benchbook-testserver"
    assert record.speculative is None and record.draft_model is None
    assert not any(k.startswith("speculative") for k in record.server.args)
    assert record.server.observed is not None and record.server.observed.engine == "benchbook-testserver"
    # what the server does not report stays the config's word, marked claimed
    assert "server.args.tp" in record.claims and "environment.features.tp" in record.claims
    assert record.server.args["tp"] == 8 and record.is_claimed("server.args.tp")
    # tampering the flag is refused by the schema: a test-server record is never a real engine's
    data = json.loads(next((tmp_path / "r").rglob("*.json")).read_text())
    data["provenance"]["test_server"] = False
    with pytest.raises(ValueError, match="test_server must be true"):
        Record.model_validate(data)


def test_any_config_against_the_test_server_gives_a_test_server_record(test_server: str, tmp_path: Path) -> None:
    cfg = tmp_path / "openai.yaml"
    cfg.write_text(
        "experiment: attach-test\nvariant: plain\nengine: openai\nprompt_set: coding-agentic\n", encoding="utf-8"
    )
    proc = _bench("run", str(cfg), "--url", test_server, "--records-dir", str(tmp_path / "r"), *SMALL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = _records(tmp_path / "r")
    assert record.provenance.test_server is True and record.server.engine == "benchbook-testserver"
    assert record.server.observed is not None and record.server.observed.endpoints["/v1/models"] == 200


def _sglang_config(tmp_path: Path, **fields: Any) -> Path:
    data: dict[str, Any] = {
        "experiment": "sglang-attach",
        "variant": "plain",
        "engine": "sglang",
        "model": {"name": "SmolLM2-135M-Instruct", "path": "STAGE/smol"},
        "prompt_set": "coding-agentic",
        "api": "generate",
        **fields,
    }
    path = tmp_path / "sglang.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_eagle3_config_attached_to_a_plain_sglang_server_is_refused(tmp_path: Path) -> None:
    """The H200 bug: eagle3.yaml against a plain SmolLM2 SGLang 0.5.17 server wrote Llama/EAGLE-3/tp 8 as fact."""
    with sglang_standin("baseline") as server:
        proc = _bench("run", str(EAGLE3), "--url", url_of(server), "--records-dir", str(tmp_path / "r"), *SMALL)
        asked = list(server.asked)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not (tmp_path / "r").exists() and "/generate" not in asked  # nothing was measured
    for line in (
        "model: config 'meta-llama/Llama-3.1-8B-Instruct', server 'STAGE/smol' (/model_info)",
        "speculative.algorithm: config 'EAGLE3', server none (/server_info)",
        "draft_model: config 'lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B', server none (/server_info)",
        "server.tp: config 8, server 1 (/server_info)",
    ):
        assert line in proc.stderr


def test_silent_config_attached_to_an_ngram_sglang_server(tmp_path: Path) -> None:
    """The H200 NGRAM case: the record's speculative settings are the server's; its versions what it reports, and
    what the config's Python on this host says only as the config's word (claimed)."""
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\necho '{json.dumps(H200_PROBE)}'\n", encoding="utf-8")
    fake_python.chmod(0o755)
    cfg = _sglang_config(tmp_path, binary=str(fake_python))
    with sglang_standin("ngram") as server:
        proc = _bench("run", str(cfg), "--url", url_of(server), "--records-dir", str(tmp_path / "r"), *SMALL)
        plain = _bench("run", str(_sglang_config(tmp_path)), "--url", url_of(server), "--records-dir",
                       str(tmp_path / "plain"), *SMALL)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = _records(tmp_path / "r")
    spec = record.speculative
    assert spec is not None and (spec.algorithm, spec.num_steps, spec.topk, spec.num_draft_tokens) == (
        "NGRAM",
        0,
        10,
        8,
    )
    assert record.levels[0].speculative is not None and record.levels[0].speculative.verify_steps
    assert record.server.version == "0.5.17" and record.environment.versions["sglang"] == "0.5.17"
    assert not record.is_claimed("environment.versions.sglang")  # the server reports it
    assert record.environment.versions["sglang-kernel"] == "0.4.5"
    for claimed in ("environment.versions.sglang-kernel", "environment.versions.torch", "environment.cuda_runtime"):
        assert record.is_claimed(claimed), record.claims
    obs = record.server.observed
    assert obs is not None and obs.tp_size == 1 and obs.sources["tp_size"] == "/server_info"
    assert obs.model == "STAGE/smol" and obs.sources["model"] == "/model_info"
    assert obs.extra["max_running_requests"] == 48
    assert record.is_claimed("model.name") and record.model.path == "STAGE/smol"
    assert not any(c.startswith(("speculative", "server.args")) for c in record.claims)
    assert record.server.server_info is not None and record.server.server_info["speculative_algorithm"] == "NGRAM"
    # without a Python named in the config, this host's packages are never read for an attached server
    assert plain.returncode == 0, plain.stdout + plain.stderr
    (bare,) = _records(tmp_path / "plain")
    assert bare.environment.versions == {"sglang": "0.5.17"} and bare.claims == ["model.name"]


# the SGLang 0.5.17 packages of the H200 run (/work/shared/sglang-h200/README.md, wheels.txt)
H200_PROBE = {
    "python": "3.12.3",
    "versions": {"sglang": "0.5.17", "sglang-kernel": "0.4.5", "flashinfer-python": "0.6.15.post1",
                 "torch": "2.11.0", "triton": "3.6.0", "transformers": "5.12.1", "nvidia-nccl-cu13": "2.28.9"},
    "torch_cuda": "13.0",
    "torch_nccl": "2.28.9",
}  # fmt: skip


def test_a_launched_sglang_records_the_packages_of_the_python_that_runs_it(tmp_path: Path) -> None:
    """The engine probe runs in the configured Python for a launched SGLang only (an attached one is read from its
    endpoints, see test_silent_config_attached_to_an_ngram_sglang_server)."""
    from bench.runner.config import parse_config
    from bench.runner.measure import _environment

    fake_python = tmp_path / "python3"
    fake_python.write_text(f"#!/bin/sh\necho '{json.dumps(H200_PROBE)}'\n", encoding="utf-8")
    fake_python.chmod(0o755)
    cfg = parse_config(
        {"experiment": "x", "variant": "v", "engine": "sglang", "prompt_set": "coding-agentic",
         "binary": str(fake_python)}, "t.yaml"
    )  # fmt: skip
    env = _environment(cfg, {}, launched=True)
    assert env.versions == H200_PROBE["versions"]  # sglang-kernel and transformers included
    assert (env.cuda_runtime, env.nccl_version) == ("13.0", "2.28.9")
    assert _environment(cfg, {}, launched=False).versions == {}


def test_a_launched_test_server_is_asked_too(tmp_path: Path) -> None:
    cfg = tmp_path / "ts.yaml"
    cfg.write_text(
        json.dumps({"experiment": "launch-test", "variant": "ts", "engine": "testserver",
                    "prompt_set": "coding-agentic", "server_args": {"ttft-ms": 2, "itl-ms": 1}}),
        encoding="utf-8",
    )  # fmt: skip
    proc = _bench("run", str(cfg), "--records-dir", str(tmp_path / "r"), "--log-dir", str(tmp_path / "logs"), *SMALL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = _records(tmp_path / "r")
    obs = record.server.observed
    assert obs is not None and obs.engine == "benchbook-testserver" and record.provenance.test_server
    assert record.claims == [] and record.mismatches == [] and record.server.command is not None


def test_a_launched_server_that_disagrees_ends_failed_before_measuring(tmp_path: Path) -> None:
    """Launched: the record file exists from before the launch; a disagreement fails it, naming the field."""
    cfg = tmp_path / "ts.yaml"
    cfg.write_text(
        json.dumps({"experiment": "launch-test", "variant": "ts", "engine": "testserver",
                    "prompt_set": "coding-agentic", "model": {"name": "meta-llama/Llama-3.1-8B-Instruct"},
                    "server_args": {"ttft-ms": 2, "itl-ms": 1, "model": "SmolLM2-135M-Instruct"}}),
        encoding="utf-8",
    )  # fmt: skip
    proc = _bench("run", str(cfg), "--records-dir", str(tmp_path / "r"), "--log-dir", str(tmp_path / "logs"), *SMALL)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (record,) = _records(tmp_path / "r")
    assert record.status.state == "failed" and record.levels == []
    assert "model: config 'meta-llama/Llama-3.1-8B-Instruct', server 'SmolLM2-135M-Instruct'" in (
        record.status.message or ""
    )
    assert [(m.field, m.claimed, m.observed) for m in record.mismatches] == [
        ("model", "meta-llama/Llama-3.1-8B-Instruct", "SmolLM2-135M-Instruct")
    ]
    assert record.model.name == "SmolLM2-135M-Instruct"  # the server's, not the config's
    again = _bench("run", str(cfg), "--records-dir", str(tmp_path / "r2"), "--log-dir", str(tmp_path / "logs"),
                   "--allow-mismatch", *SMALL)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    (kept,) = _records(tmp_path / "r2")
    assert kept.status.state == "complete" and [m.field for m in kept.mismatches] == ["model"]
