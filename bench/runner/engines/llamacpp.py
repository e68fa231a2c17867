"""llama.cpp's ``llama-server`` (a C++ executable; path from the config, ``$BENCHBOOK_LLAMA_SERVER`` or PATH).

The command is ``llama-server -m MODEL --host H --port P --parallel N --metrics [--threads T] …`` plus every
configured argument (use the long names: ``ctx-size``, ``batch-size``, ``ubatch-size``, ``spec-type``…).
``--parallel`` defaults to the largest level so every concurrent request gets a slot. Readiness is ``/health``;
what the server is comes from ``/props`` (``model_path``, ``total_slots``, ``model_ftype``, ``build_info`` =
``b<build>-<commit>``), ``/slots`` (each slot's ``speculative``: whether it drafts; the draft type is not
reported: ``/props``'s ``speculative.types`` shows a default, not the server's setting, in the vendored
llama.cpp of llama-cpp-python 0.3.36, ``tools/server/server-context.cpp`` ``get_res_props``) and ``/v1/models``.
The version comes from ``--version`` (``version: X (build N, commit C)``, upstream ``version: N (C)``) or
``/props``'s ``build_info``. Speculative acceptance is read per request from the final chunk's
``timings.draft_n`` and ``timings.draft_n_accepted``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bench.record.model import ModelRef, Speculative
from bench.redact import redact_value

from ..config import RunConfig
from .base import EngineBase, arg_value, render_args
from .modelfile import resolve_model_path, sha256_file

if TYPE_CHECKING:
    from .introspect import Probe

__all__ = ["LLAMA_SERVER_ENV", "LlamaCppEngine", "llama_server_binary", "parse_build_info", "parse_version_text"]

LLAMA_SERVER_ENV = "BENCHBOOK_LLAMA_SERVER"
_VERSION = re.compile(r"^version:\s*(.+?)\s*$", re.MULTILINE)
_VERSION_VENDORED = re.compile(r"^(?P<version>\S+) \(build (?P<build>-?\d+), commit (?P<commit>[^)\s]+)\)$")
_VERSION_UPSTREAM = re.compile(r"^(?P<build>\d+) \((?P<commit>[^)\s]+)\)$")
_BUILD_INFO = re.compile(r"^b(?P<build>\d+)-(?P<commit>\S+)$")
_PLACEHOLDERS = frozenset({"unknown", ""})
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


def _build_versions(build: str | None, commit: str | None) -> dict[str, str]:
    """Build number and commit, leaving out the placeholders of a build made outside git (build 0, "unknown")."""
    out: dict[str, str] = {}
    if build is not None and build not in ("0", "-1"):
        out["llama.cpp-build"] = build
    if commit is not None and commit.lower() not in _PLACEHOLDERS:
        out["llama.cpp-commit"] = commit
    return out


def parse_version_text(text: str | None) -> dict[str, str]:
    """``environment.versions`` entries from ``llama-server --version``'s first line (after ``version:``).

    ``0.5.0-dev (build 0, commit unknown)`` (llama-cpp-python's vendored tree) -> ``{"llama.cpp": "0.5.0-dev"}``;
    ``4589 (abc1234)`` (upstream) -> ``{"llama.cpp": "b4589", "llama.cpp-build": "4589", "llama.cpp-commit":
    "abc1234"}``."""
    if not text:
        return {}
    m = _VERSION_VENDORED.match(text.strip())
    if m:
        return {"llama.cpp": m.group("version"), **_build_versions(m.group("build"), m.group("commit"))}
    m = _VERSION_UPSTREAM.match(text.strip())
    if m:
        return {"llama.cpp": f"b{m.group('build')}", **_build_versions(m.group("build"), m.group("commit"))}
    return {"llama.cpp": text.strip()}


def parse_build_info(text: str | None) -> dict[str, str]:
    """``/props`` ``build_info`` (``b<build>-<commit>``) -> ``environment.versions`` entries."""
    m = _BUILD_INFO.match(text or "")
    return _build_versions(m.group("build"), m.group("commit")) if m else {}


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
    arg_aliases: ClassVar[dict[str, str]] = {"np": "parallel"}
    reported_defaults: ClassVar[dict[str, Any]] = {"parallel": None}

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
        return redact_value("server_args", args)  # type: ignore[no-any-return]

    @classmethod
    def probe(cls, p: Probe) -> None:
        info: dict[str, Any] = {}
        props = p.get("/props")
        if isinstance(props, dict) and ("build_info" in props or "total_slots" in props):
            p.set("engine", "llama.cpp", "/props")
            props = dict(props)
            # the chat template is long and not a performance fact; keep its length only
            template = props.pop("chat_template", None)
            if isinstance(template, str):
                info["chat_template_chars"] = len(template)
            info["props"] = props
            if isinstance(props.get("build_info"), str):
                p.set("version", props["build_info"], "/props build_info")
                p.versions.update({"llama.cpp": props["build_info"], **parse_build_info(props["build_info"])})
            p.set_present(props, {"model": "model_path", "parallel_slots": "total_slots", "model_ftype": "model_ftype"},
                          "/props")  # fmt: skip
            if isinstance(props.get("total_slots"), int):
                p.args["parallel"] = props["total_slots"]
            settings = props.get("default_generation_settings")
            if isinstance(settings, dict) and isinstance(settings.get("n_ctx"), int):
                p.set("n_ctx_per_slot", settings["n_ctx"], "/props default_generation_settings")
        slots = p.get("/slots") if "engine" in p.sources and p.engine == "llama.cpp" else None
        if isinstance(slots, list) and slots and all(isinstance(s, dict) for s in slots):
            flags = [s.get("speculative") for s in slots]
            if all(isinstance(f, bool) for f in flags):
                p.set("speculative", any(flags), "/slots")
        if info:
            info["models"] = p.models
            p.info = info

    def launched_version(self, cfg: RunConfig) -> str | None:
        return _binary_version(llama_server_binary(cfg))

    def launched_versions(self, cfg: RunConfig) -> dict[str, str]:
        return parse_version_text(_binary_version(llama_server_binary(cfg)))

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
        path = self._model_file(cfg)
        label = self.model_label(cfg)
        return label.model_copy(update={"name": cfg.model.name or path.name, "sha256": sha256_file(path)})

    def model_label(self, cfg: RunConfig) -> ModelRef:
        m = cfg.model
        name = m.name or (Path(m.path.rsplit("/", 1)[-1]).name if m.path else None)
        return ModelRef(name=name, path=m.path, revision=m.revision, quantization=m.quantization)

    def speculative_method(self, cfg: RunConfig) -> str | None:
        if self.speculative(cfg) is None:
            return None
        return "per-request timings.draft_n / draft_n_accepted (llama-server)"
