"""Engine adapters: command lines, recorded arguments, speculative settings, readiness and introspection."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.runner.config import RunConfig, parse_config
from bench.runner.engines import get_engine
from bench.runner.engines.base import render_args
from bench.runner.engines.llamacpp import LlamaCppEngine, parse_build_info, parse_version_text
from bench.runner.engines.modelfile import ModelFileError, resolve_model_path
from bench.runner.engines.sglang import SGLangEngine


def _cfg(**fields: Any) -> RunConfig:
    base: dict[str, Any] = {"experiment": "x", "variant": "v", "engine": "sglang", "prompt_set": "coding-agentic"}
    base.update(fields)
    return parse_config(base, "test.yaml")


def _client(routes: dict[str, tuple[int, Any]], headers: dict[str, str] | None = None) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        status, body = routes.get(request.url.path, (404, {"error": "not found"}))
        return httpx.Response(status, json=body, headers=headers)

    return httpx.Client(base_url="http://engine", transport=httpx.MockTransport(handler))


def test_render_args() -> None:
    assert render_args({"tp": 8, "enable-x": True, "off": False, "none": None, "ls": [1, 2], "c": 512, "-np": 3}) == [
        "--tp", "8", "--enable-x", "--ls", "1", "2", "-c", "512", "-np", "3",
    ]  # fmt: skip


def test_recorded_args_pass_the_one_redaction_module() -> None:
    """Names and shapes both: a secret-named flag is hidden whole, a credential inside another value is cut out
    (the adapters' old name-only redactor kept the URL's password)."""
    cfg = _cfg(
        server_args={"api-key": "sk-1", "hf-token": "hf_x", "tokens-per-chunk": 3,
                     "download-dir": "https://builder:hunter2pass@mirror.example/models"},
    )  # fmt: skip
    got = SGLangEngine().recorded_args(cfg)
    assert got["api-key"] == "<redacted>" and got["hf-token"] == "<redacted>" and got["tokens-per-chunk"] == 3
    assert "hunter2pass" not in got["download-dir"] and got["download-dir"].endswith("@mirror.example/models")


def test_sglang_eagle3_command_and_speculative() -> None:
    cfg = _cfg(
        model={"name": "m", "path": "/models/m", "revision": "abc"},
        draft_model={"path": "/models/draft"},
        server_args={
            "tp": 8,
            "speculative-algorithm": "EAGLE3",
            "speculative-num-steps": 3,
            "speculative-eagle-topk": 4,
            "speculative-num-draft-tokens": 16,
            "speculative-accept-threshold-single": 1.0,
            "enable-flashinfer-allreduce-fusion": True,
            "cuda-graph-max-bs": 2,
        },
        extra_args=["--trust-remote-code"],
    )
    eng = SGLangEngine()
    cmd = eng.command(cfg, "127.0.0.1", 30000)
    assert cmd[1:3] == ["-m", "sglang.launch_server"]
    joined = " ".join(cmd)
    for piece in (
        "--model-path /models/m",
        "--revision abc",
        "--port 30000",
        "--tp 8",
        "--speculative-draft-model-path /models/draft",
        "--speculative-num-draft-tokens 16",
        "--enable-flashinfer-allreduce-fusion",
        "--cuda-graph-max-bs 2",
    ):
        assert piece in joined
    assert cmd[-1] == "--trust-remote-code"
    spec = eng.speculative(cfg)
    assert spec is not None
    assert (spec.algorithm, spec.num_steps, spec.topk, spec.num_draft_tokens) == ("EAGLE3", 3, 4, 16)
    assert spec.extra == {"speculative-accept-threshold-single": 1.0}
    feats = eng.features(cfg)
    assert feats["flashinfer_allreduce_fusion"] is True
    assert feats["cuda_graph_max_bs"] == 2 and feats["tp"] == 8
    args = eng.recorded_args(cfg)
    assert args["speculative-draft-model-path"] == "/models/draft"
    assert args["extra_args"] == ["--trust-remote-code"]
    assert eng.speculative(_cfg()) is None
    assert eng.features(_cfg())["flashinfer_allreduce_fusion"] is False


def test_sglang_introspection_reads_server_and_model_info() -> None:
    eng = SGLangEngine()
    info_payload = {
        "version": "0.5.9",
        "api_key": "sk-secret",
        "model_path": "/models/m",
        "tp_size": 2,
        "dp_size": 1,
        "speculative_algorithm": None,
        "speculative_num_steps": None,
        "enable_flashinfer_allreduce_fusion": True,
        "attention_backend": "fa3",
        "internal_states": [{"avg_spec_accept_length": 3.2}],
    }
    routes = {"/health_generate": (200, {}), "/get_server_info": (200, info_payload),
              "/get_model_info": (200, {"model_path": "/models/m", "model_type": "llama"})}  # fmt: skip
    with _client(routes) as c:
        assert eng.is_ready(c)
        got = eng.introspect(c)
    obs = got.observed
    assert (obs.engine, obs.version, obs.model, obs.tp_size, obs.dp_size) == ("sglang", "0.5.9", "/models/m", 2, 1)
    assert obs.speculative_algorithm is None and obs.sources["speculative_algorithm"] == "/get_server_info"
    assert obs.allreduce_fusion is True and obs.attention_backend == "fa3"
    assert obs.sources["model"] == "/get_model_info" and obs.extra["model_type"] == "llama"
    # the newer routes were asked first, the old ones answered; /version was not needed
    assert obs.endpoints == {"/v1/models": 404, "/server_info": 404, "/get_server_info": 200, "/model_info": 404,
                             "/get_model_info": 200}  # fmt: skip
    assert got.info is not None and got.info["api_key"] == "<redacted>"
    assert got.info["internal_states"][0]["avg_spec_accept_length"] == 3.2  # kept, never used for a level
    assert got.args["tp-size"] == 2 and got.versions == {"sglang": "0.5.9"}
    # a server info without a version: /version is asked
    with _client({"/server_info": (200, {"tp_size": 1}), "/version": (200, {"version": "0.6"})}) as c:
        obs = eng.introspect(c).observed
    assert obs.version == "0.6" and obs.sources["version"] == "/version"
    with _client({"/health_generate": (503, {})}) as c:
        assert not eng.is_ready(c)


def test_a_server_of_another_kind_is_told_apart() -> None:
    """Whatever the config names: /v1/models owned_by and the test server's header decide the engine."""
    vllm = {"/v1/models": (200, {"data": [{"id": "meta-llama/Llama-3.1-8B-Instruct", "owned_by": "vllm"}]}),
            "/version": (200, {"version": "0.11.0"})}  # fmt: skip
    with _client(vllm) as c:
        obs = SGLangEngine().introspect(c).observed
    assert (obs.engine, obs.version, obs.model) == ("vllm", "0.11.0", "meta-llama/Llama-3.1-8B-Instruct")
    models = {"/v1/models": (200, {"data": [{"id": "benchbook-testserver", "owned_by": "benchbook-testserver"}]})}
    with _client(models, headers={"x-benchbook-test-server": "1"}) as c:
        got = get_engine("openai").introspect(c)
    assert got.test_server and got.observed.engine == "benchbook-testserver"
    assert got.observed.speculative_algorithm is None and "speculative_algorithm" in got.observed.sources


def test_llamacpp_command_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF fake weights")
    monkeypatch.setenv("BENCHBOOK_LLAMA_SERVER", "/opt/llama-server")
    cfg = _cfg(
        engine="llamacpp",
        model={"path": str(gguf)},
        levels=[1, 2, 16],
        server_args={"ctx-size": 2048, "batch-size": 64, "threads": 2, "spec-type": "ngram-simple",
                     "spec-ngram-simple-size-m": 12},
    )  # fmt: skip
    eng = LlamaCppEngine()
    cmd = eng.command(cfg, "127.0.0.1", 8081)
    assert cmd[0] == "/opt/llama-server"
    joined = " ".join(cmd)
    for piece in (f"--model {gguf}", "--host 127.0.0.1", "--port 8081", "--parallel 16", "--metrics",
                  "--ctx-size 2048", "--batch-size 64", "--threads 2", "--spec-type ngram-simple"):  # fmt: skip
        assert piece in joined
    spec = eng.speculative(cfg)
    assert spec is not None and spec.algorithm == "ngram-simple" and spec.num_draft_tokens == 12
    ref = eng.model_ref(cfg)
    assert ref.sha256 == hashlib.sha256(b"GGUF fake weights").hexdigest()
    assert ref.name == "m.gguf"
    feats = eng.features(cfg)
    assert feats["parallel_slots"] == 16 and feats["n_batch"] == 64
    # an explicit parallel wins over the level-derived default
    cfg2 = _cfg(engine="llamacpp", model={"path": str(gguf)}, server_args={"parallel": 3})
    assert "--parallel 3" in " ".join(eng.command(cfg2, "127.0.0.1", 1))
    assert eng.speculative(cfg2) is None


def test_llamacpp_introspection_and_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHBOOK_LLAMA_SERVER", str(tmp_path / "no-such-binary"))
    eng = LlamaCppEngine()
    props = {"build_info": "b4589-abc1234", "chat_template": "{{ long }}", "total_slots": 4, "model_path": "/m/x.gguf",
             "model_ftype": "Q4_1", "default_generation_settings": {"n_ctx": 512}}  # fmt: skip
    slots = [{"id": 0, "speculative": True}, {"id": 1, "speculative": True}]
    routes = {"/health": (200, {}), "/props": (200, props), "/slots": (200, slots), "/v1/models": (200, {"data": []})}
    with _client(routes) as c:
        assert eng.is_ready(c)
        got = eng.introspect(c)
    obs = got.observed
    assert (obs.engine, obs.version, obs.model, obs.parallel_slots) == ("llama.cpp", "b4589-abc1234", "/m/x.gguf", 4)
    assert obs.extra["speculative"] is True and obs.sources["speculative"] == "/slots"
    assert got.info is not None and "chat_template" not in got.info["props"]
    assert got.info["chat_template_chars"] == len("{{ long }}")
    assert got.versions == {"llama.cpp": "b4589-abc1234", "llama.cpp-build": "4589", "llama.cpp-commit": "abc1234"}
    assert got.args == {"parallel": 4}
    assert eng.launched_version(_cfg(engine="llamacpp")) is None  # the binary is missing
    with _client({"/health": (503, {"error": "loading"})}) as c:
        assert not eng.is_ready(c)


def test_llama_cpp_version_text_and_build_info() -> None:
    # llama-cpp-python 0.3.36's vendored tree, built outside git (the CPU binary these tests use)
    assert parse_version_text("0.5.0-dev (build 0, commit unknown)") == {"llama.cpp": "0.5.0-dev"}
    assert parse_version_text("0.5.0 (build 7321, commit 1a2b3c4)") == {
        "llama.cpp": "0.5.0", "llama.cpp-build": "7321", "llama.cpp-commit": "1a2b3c4"}  # fmt: skip
    # upstream llama.cpp: "version: <build> (<commit>)"
    assert parse_version_text("4589 (abc1234)") == {
        "llama.cpp": "b4589", "llama.cpp-build": "4589", "llama.cpp-commit": "abc1234"}  # fmt: skip
    assert parse_build_info("b0-unknown") == {} and parse_build_info("b12-deadbee") == {
        "llama.cpp-build": "12", "llama.cpp-commit": "deadbee"}  # fmt: skip


def test_package_model_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "fakepkg_models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    (pkg / "w.gguf").write_bytes(b"x")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve_model_path("package:fakepkg_models/w.gguf") == pkg / "w.gguf"
    with pytest.raises(ModelFileError, match="no file"):
        resolve_model_path("package:fakepkg_models/other.gguf")
    with pytest.raises(ModelFileError, match="not installed"):
        resolve_model_path("package:no_such_pkg_xyz/w.gguf")
    with pytest.raises(ModelFileError, match="does not exist"):
        resolve_model_path(str(tmp_path / "missing.gguf"))


def test_testserver_and_openai_adapters() -> None:
    ts = get_engine("testserver")
    cfg = _cfg(engine="testserver", server_args={"ttft-ms": 5})
    cmd = ts.command(cfg, "127.0.0.1", 9)
    assert cmd is not None and cmd[1:3] == ["-m", "bench.testing.testserver"] and "--ttft-ms" in cmd
    assert ts.test_server is True
    oa = get_engine("openai")
    assert oa.command(cfg, "127.0.0.1", 9) is None and oa.test_server is False
    with pytest.raises(ValueError, match="unknown engine"):
        get_engine("tgi")
