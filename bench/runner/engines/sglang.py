"""SGLang: ``python -m sglang.launch_server …`` (never imported; the GPU node has it installed).

Readiness is ``/health_generate`` (a real one-token generation) falling back to ``/health``. The server-info
payload (``/get_server_info``, newer releases ``/server_info``) is kept whole, but its ``avg_spec_accept_length``
is a lifetime average and is never used for a level: per-level figures come from each request's ``meta_info`` on
the native ``/generate`` API (``spec_verify_ct``, ``spec_accepted_drafts``/``spec_proposed_drafts``,
``cached_tokens``). SGLang 0.5.17's OpenAI-compatible routes carry no speculative field and report cached tokens
only with ``--enable-cache-report``: :meth:`SGLangEngine.notes` says so in the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from bench.record.model import Speculative

from ..config import RunConfig
from .base import EngineBase, arg_value, get_json, redact, render_args

__all__ = ["SGLangEngine"]

_SPEC_KEYS = (
    "speculative-algorithm",
    "speculative-draft-model-path",
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
)


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and v is not False else None
    except (TypeError, ValueError):
        return None


class SGLangEngine(EngineBase):
    name = "sglang"

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str]:
        python = cfg.binary or "python3"
        model = cfg.model.path or cfg.model.name
        cmd = [python, "-m", "sglang.launch_server", "--model-path", str(model), "--host", host, "--port", str(port)]
        if cfg.model.revision:
            cmd += ["--revision", cfg.model.revision]
        args = dict(cfg.server_args)
        if cfg.draft_model is not None and arg_value(args, "speculative-draft-model-path") is None:
            draft = cfg.draft_model.path or cfg.draft_model.name
            if draft:
                args["speculative-draft-model-path"] = draft
        if cfg.draft_model is not None and cfg.draft_model.revision:
            args.setdefault("speculative-draft-model-revision", cfg.draft_model.revision)
        return cmd + render_args(args) + list(cfg.extra_args)

    def recorded_args(self, cfg: RunConfig) -> dict[str, Any]:
        args: dict[str, Any] = {"model-path": cfg.model.path or cfg.model.name}
        if cfg.model.revision:
            args["revision"] = cfg.model.revision
        if cfg.draft_model is not None and (cfg.draft_model.path or cfg.draft_model.name):
            args["speculative-draft-model-path"] = cfg.draft_model.path or cfg.draft_model.name
        args.update(cfg.server_args)
        if cfg.extra_args:
            args["extra_args"] = list(cfg.extra_args)
        return redact(args)  # type: ignore[no-any-return]

    def is_ready(self, client: httpx.Client) -> bool:
        for path in ("/health_generate", "/health"):
            try:
                status = client.get(path).status_code
            except httpx.HTTPError:
                return False
            if status == 200:
                return True
            if status != 404:
                return False
        return False

    def server_info(self, client: httpx.Client) -> dict[str, Any] | None:
        for path in ("/get_server_info", "/server_info"):
            info = get_json(client, path)
            if isinstance(info, dict):
                return redact(info)  # type: ignore[no-any-return]
        return None

    def version(self, client: httpx.Client, info: Mapping[str, Any] | None, cfg: RunConfig) -> str | None:
        if info and isinstance(info.get("version"), str):
            return str(info["version"])
        v = get_json(client, "/version")
        if isinstance(v, dict) and isinstance(v.get("version"), str):
            return str(v["version"])
        return None

    def speculative(self, cfg: RunConfig) -> Speculative | None:
        args = cfg.server_args
        algorithm = arg_value(args, "speculative-algorithm")
        if not algorithm:
            return None
        extra = {
            k: v
            for k, v in args.items()
            if k.lstrip("-").replace("_", "-").startswith("speculative-")
            and k.lstrip("-").replace("_", "-") not in _SPEC_KEYS
        }
        return Speculative(
            algorithm=str(algorithm),
            num_steps=_int(arg_value(args, "speculative-num-steps")),
            topk=_int(arg_value(args, "speculative-eagle-topk")),
            num_draft_tokens=_int(arg_value(args, "speculative-num-draft-tokens")),
            extra=extra,
        )

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]:
        args = cfg.server_args
        out: dict[str, bool | str | int | float] = {
            "flashinfer_allreduce_fusion": bool(arg_value(args, "enable-flashinfer-allreduce-fusion")),
            "cuda_graph_disabled": bool(arg_value(args, "disable-cuda-graph")),
        }
        for key, name in (
            ("tp", "tp"),
            ("tp-size", "tp"),
            ("tensor-parallel-size", "tp"),
            ("dp", "dp"),
            ("dp-size", "dp"),
            ("cuda-graph-max-bs", "cuda_graph_max_bs"),
            ("attention-backend", "attention_backend"),
            ("max-running-requests", "max_running_requests"),
        ):
            v = arg_value(args, key)
            if isinstance(v, bool | str | int | float) and not isinstance(v, list):
                out[name] = v
        return out

    def speculative_method(self, cfg: RunConfig) -> str | None:
        if self.speculative(cfg) is None:
            return None
        if cfg.api == "generate":
            return (
                "per request from SGLang /generate meta_info: spec_verify_ct with completion_tokens (accept length), "
                "spec_accepted_drafts/spec_proposed_drafts (acceptance rate)"
            )
        return (
            f"none: SGLang's OpenAI-compatible {cfg.api} stream carries no speculative field (checked on 0.5.17); "
            "both figures need api 'generate'"
        )

    def notes(self, cfg: RunConfig) -> list[str]:
        """Which API gives which figure (SGLang 0.5.17, tests/runner/fixtures/sglang/)."""
        notes: list[str] = []
        if self.speculative(cfg) is not None and cfg.api != "generate":
            notes.append(
                f"api {cfg.api}: SGLang's OpenAI-compatible stream carries no speculative field, so neither the "
                "accept length nor the acceptance rate can be measured per level; api 'generate' gives both"
            )
        if cfg.api != "generate" and not arg_value(cfg.server_args, "enable-cache-report"):
            notes.append(
                f"api {cfg.api}: cached prompt tokens (usage.prompt_tokens_details) are reported only when the "
                "server runs with --enable-cache-report; api 'generate' always reports meta_info.cached_tokens"
            )
        return notes
