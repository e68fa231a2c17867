"""Engine adapters: command lines, recorded arguments, speculative settings, readiness and info endpoints."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.runner.config import RunConfig, parse_config
from bench.runner.engines import get_engine
from bench.runner.engines.base import redact, render_args
from bench.runner.engines.llamacpp import LlamaCppEngine
from bench.runner.engines.modelfile import ModelFileError, resolve_model_path
from bench.runner.engines.sglang import SGLangEngine


def _cfg(**fields: Any) -> RunConfig:
    base: dict[str, Any] = {"experiment": "x", "variant": "v", "engine": "sglang", "prompt_set": "coding-agentic"}
    base.update(fields)
    return parse_config(base, "test.yaml")


def _client(routes: dict[str, tuple[int, Any]]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        status, body = routes.get(request.url.path, (404, {"error": "not found"}))
        return httpx.Response(status, json=body)

    return httpx.Client(base_url="http://engine", transport=httpx.MockTransport(handler))


def test_render_args() -> None:
    assert render_args({"tp": 8, "enable-x": True, "off": False, "none": None, "ls": [1, 2], "c": 512, "-np": 3}) == [
        "--tp", "8", "--enable-x", "--ls", "1", "2", "-c", "512", "-np", "3",
    ]  # fmt: skip


def test_redact_secret_keys_only() -> None:
    got = redact({"api_key": "sk-1", "hf-token": "hf_x", "tokens-per-chunk": 3, "nested": [{"password": "p"}]})
    assert got == {"api_key": "<redacted>", "hf-token": "<redacted>", "tokens-per-chunk": 3,
                   "nested": [{"password": "<redacted>"}]}  # fmt: skip


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


def test_sglang_ready_info_version() -> None:
    eng = SGLangEngine()
    cfg = _cfg()
    info_payload = {"version": "0.5.9", "api_key": "sk-secret", "internal_states": [{"avg_spec_accept_length": 3.2}]}
    with _client({"/health_generate": (200, {}), "/get_server_info": (200, info_payload)}) as c:
        assert eng.is_ready(c)
        info = eng.server_info(c)
        assert info is not None and info["api_key"] == "<redacted>"
        assert info["internal_states"][0]["avg_spec_accept_length"] == 3.2  # kept, never used for a level
        assert eng.version(c, info, cfg) == "0.5.9"
    # older/newer routes: /health only, /server_info, /version
    with _client({"/health": (200, {}), "/server_info": (200, {"x": 1}), "/version": (200, {"version": "0.6"})}) as c:
        assert eng.is_ready(c)
        info = eng.server_info(c)
        assert info == {"x": 1}
        assert eng.version(c, info, cfg) == "0.6"
    with _client({"/health_generate": (503, {})}) as c:
        assert not eng.is_ready(c)


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


def test_llamacpp_info_and_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHBOOK_LLAMA_SERVER", str(tmp_path / "no-such-binary"))
    eng = LlamaCppEngine()
    cfg = _cfg(engine="llamacpp", model={"path": "x.gguf"})
    props = {"build_info": "b1-abc", "chat_template": "{{ long }}", "total_slots": 4}
    with _client({"/health": (200, {}), "/props": (200, props), "/v1/models": (200, {"data": []})}) as c:
        assert eng.is_ready(c)
        info = eng.server_info(c)
        assert info is not None
        assert "chat_template" not in info["props"] and info["chat_template_chars"] == len("{{ long }}")
        assert eng.version(c, info, cfg) == "b1-abc"  # the binary is missing: /props build_info
    with _client({"/health": (503, {"error": "loading"})}) as c:
        assert not eng.is_ready(c)


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
    assert cmd is not None and cmd[1:3] == ["-m", "bench.testserver"] and "--ttft-ms" in cmd
    assert ts.test_server is True
    oa = get_engine("openai")
    assert oa.command(cfg, "127.0.0.1", 9) is None and oa.test_server is False
    with pytest.raises(ValueError, match="unknown engine"):
        get_engine("tgi")
