"""SGLang: ``python -m sglang.launch_server …`` (never imported; the GPU node has it installed).

Readiness is ``/health_generate`` (a real one-token generation) falling back to ``/health``. What the server is
comes from ``/server_info`` (0.5.17; older releases ``/get_server_info``, which 0.5.17 still answers with a
deprecation warning): every server argument flat, the scheduler info, ``internal_states`` and ``version``
(sglang 0.5.17 ``srt/entrypoints/http_server.py`` l.771-806); and ``/model_info`` (``/get_model_info``):
``model_path``, ``model_type``, ``architectures``, ``weight_version`` (l.723-758). ``/version`` is asked only
when neither says the version (0.5.17 has no such route). The payload is kept whole, but its
``avg_spec_accept_length`` is a lifetime average and is never used for a level: per-level figures come from each
request's ``meta_info`` on the native ``/generate`` API (``spec_verify_ct``,
``spec_accepted_drafts``/``spec_proposed_drafts``, ``cached_tokens``). SGLang 0.5.17's OpenAI-compatible routes
carry no speculative field and report cached tokens only with ``--enable-cache-report``:
:meth:`SGLangEngine.notes` says so in the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import httpx

from bench.record.model import Speculative
from bench.redact import redact_value

from ..config import RunConfig
from .base import EngineBase, arg_value, norm_arg, render_args

if TYPE_CHECKING:
    from .introspect import Probe

__all__ = ["SGLangEngine"]

_SPEC_KEYS = (
    "speculative-algorithm",
    "speculative-draft-model-path",
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
)


# Observed field -> SGLang ServerArgs key (reported as they are, null included)
_OBSERVED_KEYS = {
    "tp_size": "tp_size",
    "dp_size": "dp_size",
    "speculative_algorithm": "speculative_algorithm",
    "speculative_num_steps": "speculative_num_steps",
    "speculative_topk": "speculative_eagle_topk",
    "speculative_num_draft_tokens": "speculative_num_draft_tokens",
    "draft_model": "speculative_draft_model_path",
    "allreduce_fusion": "enable_flashinfer_allreduce_fusion",
    "attention_backend": "attention_backend",
}
_EXTRA_KEYS = (
    "served_model_name",
    "max_running_requests",
    "cuda_graph_max_bs",
    "disable_cuda_graph",
    "disable_radix_cache",
    "mem_fraction_static",
    "context_length",
    "max_total_num_tokens",
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "sampling_backend",
    "chunked_prefill_size",
    "page_size",
)
_NOT_ARGS = frozenset({"internal_states", "version"})


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and v is not False else None
    except (TypeError, ValueError):
        return None


class SGLangEngine(EngineBase):
    name = "sglang"
    arg_aliases: ClassVar[dict[str, str]] = {
        "tp": "tp-size",
        "dp": "dp-size",
        "tensor-parallel-size": "tp-size",
        "data-parallel-size": "dp-size",
    }
    reported_defaults: ClassVar[dict[str, Any]] = {
        "tp-size": 1,
        "dp-size": 1,
        "enable-flashinfer-allreduce-fusion": False,
        "enable-cache-report": False,  # decides whether the OpenAI routes report cached tokens (notes)
        **{f"speculative-{k}": None for k in ("algorithm", "num-steps", "eagle-topk", "num-draft-tokens")},
        "speculative-draft-model-path": None,
    }

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
        return redact_value("server_args", args)  # type: ignore[no-any-return]

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

    @classmethod
    def probe(cls, p: Probe) -> None:
        path, info = p.first("/server_info", "/get_server_info")
        if path is not None and ("tp_size" in info or "version" in info):
            p.set("engine", "sglang", path)
            if isinstance(info.get("version"), str):
                p.set("version", info["version"], path)
                p.versions["sglang"] = info["version"]
            p.set_present(info, _OBSERVED_KEYS, path)
            p.set_present(info, {k: k for k in _EXTRA_KEYS}, path)
            p.args.update({norm_arg(k): v for k, v in info.items() if k not in _NOT_ARGS and _scalar(v)})
            p.info = info
        mpath, model_info = p.first("/model_info", "/get_model_info")
        if mpath is not None:
            p.set_present(model_info, {"model": "model_path"}, mpath)
            p.set_present(model_info, {k: k for k in ("model_type", "architectures", "weight_version")}, mpath)
        if path is not None:
            p.set_present(info, {"model": "model_path"}, path)
        if "version" not in p.sources and (path is not None or mpath is not None):
            body = p.get("/version")
            if isinstance(body, dict) and isinstance(body.get("version"), str):
                p.set("version", body["version"], "/version")
                p.versions["sglang"] = body["version"]

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


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)
