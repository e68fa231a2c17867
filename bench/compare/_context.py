"""What makes two records comparable: the one table that splits a record's facts into CONTEXT and INFO.

A *context* field changes performance: two records whose contexts differ measure different things, and
a comparison between them is flagged field by field (unless the difference is the experiment's declared
treatment, see ``bench.settings``). An *info* field is shown (``bench diff``) but never splits.

``CONTEXT_FIELDS`` below is the single place where that split is declared. Each entry names a dotted
field, the raw record paths it reads (globs, also used to tell the role of any raw field in a diff), how
it is read, and its role. ``render_context_table_markdown()`` renders the table for the methodology page.

A value the record does not state is ``None`` and stays part of the context: a record that does not state
its model is not comparable by fingerprint with one that does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from bench.record.model import ModelRef, Record

__all__ = [
    "CONTEXT_FIELDS",
    "ContextField",
    "Role",
    "context_of",
    "fingerprint",
    "normalize_arg_name",
    "render_context_table_markdown",
    "role_of",
]

Role = Literal["context", "info"]

TP_ALIASES = ("tp", "tp-size", "tensor-parallel-size")
DP_ALIASES = ("dp", "dp-size", "data-parallel-size")


def normalize_arg_name(name: str) -> str:
    """``--tp_size`` / ``tp-size`` / ``TP_SIZE`` -> ``tp-size``: one spelling for every engine's flags."""
    return name.lstrip("-").replace("_", "-").lower()


def _norm_args(record: Record) -> dict[str, Any]:
    return {normalize_arg_name(k): v for k, v in record.server.args.items()}


def _int_or_raw(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def _first_arg(record: Record, aliases: tuple[str, ...]) -> Any:
    args = _norm_args(record)
    for name in aliases:
        if name in args and args[name] is not None:
            return _int_or_raw(args[name])
    return None


def major_minor(version: str | None) -> str | None:
    """``0.5.3rc0`` -> ``0.5``; ``v1.2`` -> ``1.2``; ``13`` -> ``13``; unparseable text is kept whole."""
    if version is None:
        return None
    m = re.match(r"^\s*v?(\d+)(?:\.(\d+))?", str(version))
    if not m:
        return str(version)
    return m.group(1) if m.group(2) is None else f"{m.group(1)}.{m.group(2)}"


def _major(version: str | None) -> str | None:
    mm = major_minor(version)
    return None if mm is None else mm.split(".")[0]


def _engine_version(record: Record) -> str | None:
    raw = record.server.version or record.environment.versions.get(record.server.engine)
    return major_minor(raw)


def _cuda_major(record: Record) -> str | None:
    return _major(record.environment.cuda_runtime or record.environment.versions.get("cuda"))


def _prompt_set(record: Record) -> str:
    w = record.workload
    return f"sha256:{w.prompt_set_hash}" if w.prompt_set_hash else f"name:{w.prompt_set}"


def _model_attr(ref: ModelRef | None, attr: str) -> Any:
    return None if ref is None else getattr(ref, attr)


def _spec_attr(record: Record, attr: str) -> Any:
    return None if record.speculative is None else getattr(record.speculative, attr)


def _args_matching(record: Record, pred: Callable[[str], bool]) -> dict[str, Any]:
    return {k: v for k, v in sorted(_norm_args(record).items()) if pred(k)}


def _is_spec_arg(name: str) -> bool:
    return name.startswith("speculative-")


def _is_flag_arg(name: str) -> bool:
    return name.startswith(("enable-", "disable-"))


@dataclass(frozen=True)
class ContextField:
    """One row of the split. ``expand``: ``read`` returns a mapping whose keys extend ``name`` (``name`` ends in
    ``*``), e.g. ``environment.env_vars.NCCL_*`` -> ``environment.env_vars.NCCL_ALGO``."""

    name: str
    role: Role
    sources: tuple[str, ...]
    read: Callable[[Record], Any]
    description: str
    expand: bool = False


def _fixed(name: str, read: Callable[[Record], Any], description: str, *sources: str) -> ContextField:
    return ContextField(name, "context", sources or (name,), read, description)


def _info(name: str, description: str) -> ContextField:
    return ContextField(name, "info", (name,), lambda _r: None, description)


CONTEXT_FIELDS: tuple[ContextField, ...] = (
    _fixed("model.name", lambda r: r.model.name, "target model"),
    _fixed("model.revision", lambda r: r.model.revision, "target model revision"),
    _fixed("model.quantization", lambda r: r.model.quantization, "a quantized model is a different model"),
    _fixed("draft_model.name", lambda r: _model_attr(r.draft_model, "name"), "draft model (speculative decoding)"),
    _fixed("draft_model.revision", lambda r: _model_attr(r.draft_model, "revision"), "draft model revision"),
    _fixed("environment.gpu.model", lambda r: r.environment.gpu.model, "GPU model"),
    _fixed(
        "environment.gpu.architecture",
        lambda r: r.environment.gpu.architecture,
        "GPU architecture (decides when the model is not stated)",
    ),
    _fixed("environment.gpu.count", lambda r: r.environment.gpu.count, "number of GPUs"),
    _fixed(
        "server.tp",
        lambda r: _first_arg(r, TP_ALIASES),
        "tensor parallelism (SGLang `--tp`/`--tp-size`, vLLM `--tensor-parallel-size`)",
        *(f"server.args.{a}" for a in TP_ALIASES),
    ),
    _fixed(
        "server.dp",
        lambda r: _first_arg(r, DP_ALIASES),
        "data parallelism (SGLang `--dp`/`--dp-size`, vLLM `--data-parallel-size`)",
        *(f"server.args.{a}" for a in DP_ALIASES),
    ),
    _fixed("server.engine", lambda r: r.server.engine, "serving engine"),
    _fixed(
        "server.engine_version",
        _engine_version,
        "engine version, major.minor only",
        "server.version",
        "environment.versions.sglang",
        "environment.versions.vllm",
        "environment.versions.llama.cpp",
    ),
    _fixed("speculative.algorithm", lambda r: _spec_attr(r, "algorithm"), "speculative algorithm (None: none)"),
    _fixed("speculative.num_steps", lambda r: _spec_attr(r, "num_steps"), "draft steps"),
    _fixed("speculative.topk", lambda r: _spec_attr(r, "topk"), "draft tree top-k"),
    _fixed("speculative.num_draft_tokens", lambda r: _spec_attr(r, "num_draft_tokens"), "draft tokens per step"),
    ContextField(
        "speculative.extra.*",
        "context",
        ("speculative.extra.*",),
        lambda r: dict(sorted(r.speculative.extra.items())) if r.speculative else {},
        "other speculative settings",
        expand=True,
    ),
    ContextField(
        "server.args.speculative-*",
        "context",
        ("server.args.speculative-*",),
        lambda r: _args_matching(r, _is_spec_arg),
        "speculative server arguments (names normalised: `_` -> `-`)",
        expand=True,
    ),
    ContextField(
        "server.args.enable-* / disable-*",
        "context",
        ("server.args.enable-*", "server.args.disable-*"),
        lambda r: _args_matching(r, _is_flag_arg),
        "feature-flag server arguments, e.g. `enable-flashinfer-allreduce-fusion`",
        expand=True,
    ),
    _fixed(
        "workload.prompt_set",
        _prompt_set,
        "prompt set: its content hash, or its name when the hash is unknown",
        "workload.prompt_set",
        "workload.prompt_set_hash",
    ),
    _fixed("workload.max_tokens", lambda r: r.workload.max_tokens, "output length cap"),
    _fixed("workload.temperature", lambda r: r.workload.temperature, "sampling temperature"),
    _fixed("workload.ignore_eos", lambda r: r.workload.ignore_eos, "generate to max_tokens regardless of EOS"),
    _fixed(
        "workload.prefix",
        lambda r: r.workload.prefix,
        "prompt prefixes: `unique` per request, or `repeated` as written (which a prefix cache turns into hits)",
    ),
    _fixed(
        "workload.api", lambda r: r.workload.api, "the API route (chat, completions, native generate): streams differ"
    ),
    _fixed(
        "environment.cuda_major",
        _cuda_major,
        "CUDA runtime, major version",
        "environment.cuda_runtime",
        "environment.versions.cuda",
    ),
    ContextField(
        "environment.env_vars.NCCL_*",
        "context",
        ("environment.env_vars.NCCL_*",),
        lambda r: {k: v for k, v in sorted(r.environment.env_vars.items()) if k.startswith("NCCL_")},
        "NCCL tuning variables",
        expand=True,
    ),
    ContextField(
        "environment.features.*",
        "context",
        ("environment.features.*",),
        lambda r: dict(sorted(r.environment.features.items())),
        "performance switches, e.g. `flashinfer_allreduce_fusion`",
        expand=True,
    ),
    _info("server.args.*", "every other server argument (memory fraction, CUDA-graph sizes, paths...)"),
    _info("server.version", "the full engine version (only major.minor splits)"),
    _info("environment.gpu.*", "driver, memory, power limit, clocks"),
    _info("environment.nccl_version", "NCCL library version"),
    _info("environment.versions.*", "torch, flashinfer and other library versions"),
    _info("environment.env_vars.*", "allow-listed variables other than `NCCL_*`"),
    _info("environment.info.*", "host facts: hostname, CPU, ..."),
    _info("model.path / sha256", "where the weights were read from"),
    _info("workload.*", "prompt count, requests per level, warm-up, seed, planned levels"),
    _info("provenance.*, benchbook.*, title, tags, ...", "who measured, with which tool and commit"),
)


def _key(entry: ContextField, sub: str) -> str:
    """``environment.env_vars.NCCL_*`` + ``NCCL_ALGO`` -> ``environment.env_vars.NCCL_ALGO``."""
    return f"{entry.name.rsplit('.', 1)[0]}.{sub}"


def context_of(record: Record) -> dict[str, Any]:
    """The record's comparability context: dotted name -> JSON-able value (``None`` = not stated)."""
    ctx: dict[str, Any] = {}
    for entry in CONTEXT_FIELDS:
        if entry.role != "context":
            continue
        value = entry.read(record)
        if entry.expand:
            assert isinstance(value, Mapping)
            for sub, v in value.items():
                ctx[_key(entry, str(sub))] = v
        else:
            ctx[entry.name] = value
    return ctx


def fingerprint(record: Record) -> str:
    """Short sha256 (12 hex digits) of the canonical JSON of ``context_of(record)``."""
    canonical = json.dumps(context_of(record), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


@functools.lru_cache(maxsize=1 << 14)
def role_of(raw_path: str) -> Role:
    """The role of a raw, flattened record field (as in ``bench diff``): context if a context entry reads it.

    Server argument names are normalised first (``--tp_size`` -> ``server.args.tp-size``). Remembered: the role
    depends on the name alone (``CONTEXT_FIELDS`` is a constant), and a site build asks for the same names often."""
    prefix = "server.args."
    if raw_path.startswith(prefix):
        raw_path = prefix + normalize_arg_name(raw_path[len(prefix) :])
    for entry in CONTEXT_FIELDS:
        if entry.role == "context" and any(fnmatchcase(raw_path, pat) for pat in entry.sources):
            return "context"
    return "info"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_context_table_markdown() -> str:
    """The context/info split as a Markdown table (pure; for the methodology page)."""
    lines = ["| field | role | read from | meaning |", "|---|---|---|---|"]
    for e in CONTEXT_FIELDS:
        sources = ", ".join(f"`{s}`" for s in e.sources)
        lines.append(f"| `{_cell(e.name)}` | {e.role} | {_cell(sources)} | {_cell(e.description)} |")
    return "\n".join(lines) + "\n"
