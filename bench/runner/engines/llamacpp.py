"""llama.cpp's ``llama-server`` (a C++ executable; path from the config, ``$BENCHBOOK_LLAMA_SERVER`` or PATH).

The command is ``llama-server -m MODEL --host H --port P --parallel N --metrics [--threads T] …`` plus every
configured argument (use the long names: ``ctx-size``, ``batch-size``, ``ubatch-size``, ``spec-type``…).
``--parallel`` defaults to the largest level so every concurrent request gets a slot. Readiness is ``/health``;
server info is ``/props`` plus ``/v1/models``; the version comes from ``--version`` or ``/props``'s
``build_info``. Speculative acceptance is read per request from the final chunk's ``timings.draft_n`` and
``timings.draft_n_accepted``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import httpx

from bench.record.model import ModelRef, Speculative

from ..config import RunConfig
from .base import EngineBase, arg_value, get_json, redact, render_args
from .modelfile import resolve_model_path, sha256_file

__all__ = ["LLAMA_SERVER_ENV", "LlamaCppEngine", "llama_server_binary"]

LLAMA_SERVER_ENV = "BENCHBOOK_LLAMA_SERVER"
_VERSION = re.compile(r"^version:\s*(.+?)\s*$", re.MULTILINE)
_SPEC_MAIN = ("spec-type", "spec-draft-n-max", "spec-ngram-simple-size-m", "spec-ngram-mod-n-max")


def llama_server_binary(cfg: RunConfig) -> str:
    """The llama-server executable: the config's ``binary``, else ``$BENCHBOOK_LLAMA_SERVER``, else PATH."""
    if cfg.binary:
        return os.path.expandvars(os.path.expanduser(cfg.binary))
    env = os.environ.get(LLAMA_SERVER_ENV)
    if env:
        return env
    return shutil.which("llama-server") or "llama-server"


@cache
def _binary_version(binary: str) -> str | None:
    try:
        proc = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _VERSION.search(proc.stdout + proc.stderr)
    if not m:
        return None
    return m.group(1)


def _norm(key: str) -> str:
    return key.lstrip("-").replace("_", "-")


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and not isinstance(v, bool) else None
    except (TypeError, ValueError):
        return None


class LlamaCppEngine(EngineBase):
    name = "llama.cpp"
    ready_paths = ("/health",)

    def _model_file(self, cfg: RunConfig) -> Path:
        if not cfg.model.path:
            raise ValueError("llama.cpp needs model.path (a GGUF file or 'package:<pkg>/<file>.gguf')")
        return resolve_model_path(cfg.model.path)

    def parallel(self, cfg: RunConfig) -> int:
        v = _int(arg_value(cfg.server_args, "parallel", "np"))
        return v if v is not None else max(cfg.levels)

    def _full_args(self, cfg: RunConfig) -> dict[str, Any]:
        args: dict[str, Any] = {k: v for k, v in cfg.server_args.items() if _norm(k) not in ("parallel", "np")}
        args = {"parallel": self.parallel(cfg), **args}
        if not any(_norm(k) == "metrics" for k in args):
            args["metrics"] = True
        return args

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str]:
        model = self._model_file(cfg)
        cmd = [llama_server_binary(cfg), "--model", str(model), "--host", host, "--port", str(port)]
        return cmd + render_args(self._full_args(cfg)) + list(cfg.extra_args)

    def recorded_args(self, cfg: RunConfig) -> dict[str, Any]:
        args: dict[str, Any] = {"model": cfg.model.path, **self._full_args(cfg)}
        if cfg.extra_args:
            args["extra_args"] = list(cfg.extra_args)
        return redact(args)  # type: ignore[no-any-return]

    def server_info(self, client: httpx.Client) -> dict[str, Any] | None:
        props = get_json(client, "/props")
        models = get_json(client, "/v1/models")
        if props is None and models is None:
            return None
        info: dict[str, Any] = {}
        if isinstance(props, dict):
            # the chat template is long and not a performance fact; keep its fingerprint only
            props = dict(props)
            template = props.pop("chat_template", None)
            if isinstance(template, str):
                info["chat_template_chars"] = len(template)
            info["props"] = redact(props)
        if models is not None:
            info["models"] = redact(models)
        return info

    def version(self, client: httpx.Client, info: Mapping[str, Any] | None, cfg: RunConfig) -> str | None:
        from_binary = _binary_version(llama_server_binary(cfg))
        if from_binary:
            return from_binary
        props = (info or {}).get("props")
        if isinstance(props, dict) and isinstance(props.get("build_info"), str):
            return str(props["build_info"])
        return None

    def speculative(self, cfg: RunConfig) -> Speculative | None:
        args = cfg.server_args
        spec_type = arg_value(args, "spec-type")
        draft = cfg.draft_model is not None or arg_value(args, "spec-draft-model", "model-draft", "md") is not None
        if not spec_type and not draft:
            return None
        algorithm = str(spec_type) if spec_type else "draft-simple"
        n_draft = _int(arg_value(args, "spec-draft-n-max"))
        if n_draft is None and algorithm == "ngram-simple":
            n_draft = _int(arg_value(args, "spec-ngram-simple-size-m"))
        if n_draft is None and algorithm == "ngram-mod":
            n_draft = _int(arg_value(args, "spec-ngram-mod-n-max"))
        extra = {k: v for k, v in args.items() if _norm(k).startswith("spec-") and _norm(k) not in _SPEC_MAIN}
        notes = None if n_draft is not None else "maximum draft length not set: the engine's default applies"
        return Speculative(algorithm=algorithm, num_draft_tokens=n_draft, extra=extra, notes=notes)

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]:
        out: dict[str, bool | str | int | float] = {"parallel_slots": self.parallel(cfg)}
        for key, name in (
            ("batch-size", "n_batch"),
            ("b", "n_batch"),
            ("ubatch-size", "n_ubatch"),
            ("ub", "n_ubatch"),
            ("ctx-size", "n_ctx"),
            ("c", "n_ctx"),
            ("threads", "threads"),
            ("t", "threads"),
            ("n-gpu-layers", "n_gpu_layers"),
            ("ngl", "n_gpu_layers"),
        ):
            v = _int(cfg.server_args.get(key))
            if v is not None:
                out[name] = v
        return out

    def model_ref(self, cfg: RunConfig) -> ModelRef:
        m = cfg.model
        path = self._model_file(cfg)
        return ModelRef(
            name=m.name or path.name,
            path=m.path,
            revision=m.revision,
            sha256=sha256_file(path),
            quantization=m.quantization,
        )

    def speculative_method(self, cfg: RunConfig) -> str | None:
        if self.speculative(cfg) is None:
            return None
        return "per-request timings.draft_n / draft_n_accepted (llama-server)"
