"""Claimed vs observed: what a record may state as fact about the server it measured.

The rule
--------
Before anything is measured the harness asks the server what it is (``EngineBase.introspect``: engine, version,
model, tp/dp, speculative algorithm/steps/topk/draft tokens, draft model, and for SGLang every server argument).
The record's main fields (``server.engine``, ``server.args``, ``model``, ``draft_model``, ``speculative``,
``environment.features``) are built from the config *overlaid with what the server reports*: where the server
reports a value, the record states the server's value.

* **Attached runs** (``--url``): the harness passed nothing to the server. A value that only the config states
  (the server does not report it) is a *claim*: its dotted field is listed in ``claims`` and shown "claimed".
  ``server.args`` holds the config's arguments (claimed unless the server reports them) plus the comparability
  arguments the server reports away from their defaults (e.g. SGLang's ``tp-size`` 8, its NGRAM settings).
* **Launched runs**: the harness built the command line itself and keeps it (``server.command``). The server
  arguments, the model path and revision and the draft model path it passed are facts of what was launched
  (the engine refuses to start on arguments it does not take). Labels the server never receives are claims
  unless the server reports the same: a model or draft-model *name* that is not on the command line, a
  quantization label. The server is asked too (once it is ready), and what it reports wins.
* **Comparability fields** (engine, model, speculative algorithm, steps, topk, draft tokens, draft model,
  tp, dp): a disagreement between config and server is a *mismatch*. Attached: the run stops before anything
  is measured, no record file is written, exit status 2, and the message names each field with both values.
  Launched: the record (created before the launch, so that a crash at start-up is kept) ends ``failed`` before
  the first level with the same message, exit status 1. With ``--allow-mismatch`` the run goes on,
  ``mismatches`` keeps both values and the main fields hold the server's.
* A config that does not mention speculative decoding states nothing about it: a server that speculates gives a
  record whose ``speculative`` is the server's (with a note saying so).
* Model identity: the config's model matches the served one when its name or path equals it or their last path
  components match (a hub id and a local copy, a GGUF file named after the model).
* A server that announces itself as benchbook's test server gives ``provenance.test_server: true``, whatever
  engine the config names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.record.model import TEST_SERVER_ENGINE, Mismatch, Observed

from .config import ModelConfig, RunConfig
from .engines import EngineBase
from .engines.base import arg_value, norm_arg
from .engines.introspect import Introspection

__all__ = [
    "CONFIG_ENGINE",
    "Reconciled",
    "find_mismatches",
    "mismatch_message",
    "observed_speculating",
    "reconcile",
    "same_model",
]

CONFIG_ENGINE: dict[str, str | None] = {
    "sglang": "sglang",
    "llamacpp": "llama.cpp",
    "testserver": TEST_SERVER_ENGINE,
    "openai": None,  # any OpenAI-compatible server: the config does not say which engine
}
_TP = ("tp", "tp-size", "tensor-parallel-size")
_DP = ("dp", "dp-size", "data-parallel-size")
_SPEC_PREFIXES = ("speculative-", "spec-", "draft-", "model-draft")
_DRAFT_ARGS = ("speculative-draft-model-path", "model-draft", "md", "spec-draft-model")
_NOT_CLAIMABLE = frozenset({"speculative.notes"})


@dataclass(frozen=True)
class Reconciled:
    """The outcome: the config the record's main fields come from, and what of it is claimed or mismatched."""

    cfg: RunConfig
    """The config overlaid with what the server reports (the record's main fields are derived from it)."""
    engine: str
    """``server.engine``: the engine the server says it is, else the adapter's name."""
    mismatches: tuple[Mismatch, ...] = ()
    claims: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    test_server: bool = False


def _tail(x: str) -> str:
    return x.rstrip("/").rsplit("/", 1)[-1].lower()


def same_model(a: str, b: str) -> bool:
    """True when two model names/paths name the same model (equal, or equal last path components, or one
    file name is the other plus a suffix such as ``.Q4_1.gguf``)."""
    ta, tb = _tail(a), _tail(b)
    return a == b or ta == tb or ta.startswith(tb + ".") or tb.startswith(ta + ".")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, int | float):
        try:
            return float(a) == float(b)
        except ValueError:
            return False
    if isinstance(a, int | float) and isinstance(b, str):
        return _same(b, a)
    return str(a).lower() == str(b).lower() if isinstance(a, str) and isinstance(b, str) else bool(a == b)


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def observed_speculating(obs: Observed) -> bool | None:
    """Whether the server speculates: from its reported algorithm, else llama.cpp's ``/slots``; None: unknown."""
    if "speculative_algorithm" in obs.sources:
        alg = obs.speculative_algorithm
        return alg is not None and alg.strip().upper() not in ("", "NONE")
    if "speculative" in obs.sources:
        return bool(obs.extra.get("speculative"))
    return None


def _model_ids(m: ModelConfig | None) -> list[str]:
    return [x for x in ((m.name, m.path) if m is not None else ()) if x]


def _draft_ids(cfg: RunConfig) -> list[str]:
    ids = _model_ids(cfg.draft_model)
    arg = arg_value(cfg.server_args, *_DRAFT_ARGS)
    return ids + ([str(arg)] if arg else [])


def find_mismatches(cfg: RunConfig, engine: EngineBase, obs: Observed) -> list[Mismatch]:
    """Every comparability field on which the config and the server disagree (both must state it)."""
    out: list[Mismatch] = []
    rep = obs.sources
    want = CONFIG_ENGINE.get(cfg.engine)
    if want is not None and "engine" in rep and obs.engine != want:
        out.append(Mismatch(field="server.engine", claimed=want, observed=obs.engine))
    ids = _model_ids(cfg.model)
    if ids and "model" in rep and obs.model and not any(same_model(i, obs.model) for i in ids):
        out.append(Mismatch(field="model", claimed=cfg.model.path or cfg.model.name, observed=obs.model))
    spec = engine.speculative(cfg)
    speculating = observed_speculating(obs)
    if spec is not None and speculating is False:
        out.append(Mismatch(field="speculative.algorithm", claimed=spec.algorithm, observed=None))
    elif spec is not None and speculating:
        alg = obs.speculative_algorithm
        if alg is not None and spec.algorithm is not None and not _same(spec.algorithm, alg):
            out.append(Mismatch(field="speculative.algorithm", claimed=spec.algorithm, observed=alg))
        for name, key in (("num_steps", "speculative_num_steps"), ("topk", "speculative_topk"),
                          ("num_draft_tokens", "speculative_num_draft_tokens")):  # fmt: skip
            claimed, seen = getattr(spec, name), getattr(obs, key)
            if claimed is not None and key in rep and seen is not None and int(claimed) != seen:
                out.append(Mismatch(field=f"speculative.{name}", claimed=claimed, observed=seen))
    drafts = _draft_ids(cfg)
    seen_draft = obs.draft_model
    if drafts and "draft_model" in rep and (seen_draft is None or not any(same_model(d, seen_draft) for d in drafts)):
        out.append(Mismatch(field="draft_model", claimed=drafts[-1], observed=obs.draft_model))
    for field, aliases, key in (("server.tp", _TP, "tp_size"), ("server.dp", _DP, "dp_size")):
        claimed = _int(arg_value(cfg.server_args, *aliases))
        seen = getattr(obs, key)
        if claimed is not None and key in rep and seen is not None and claimed != seen:
            out.append(Mismatch(field=field, claimed=claimed, observed=seen))
    return out


def mismatch_message(mismatches: list[Mismatch] | tuple[Mismatch, ...], obs: Observed) -> str:
    """One line per field: ``model: config 'X', server 'Y' (/model_info)``."""
    source_of = {"server.engine": "engine", "model": "model", "draft_model": "draft_model",
                 "speculative.algorithm": "speculative_algorithm", "speculative.num_steps": "speculative_num_steps",
                 "speculative.topk": "speculative_topk", "speculative.num_draft_tokens": "speculative_num_draft_tokens",
                 "server.tp": "tp_size", "server.dp": "dp_size"}  # fmt: skip
    lines = []
    for m in mismatches:
        src = obs.sources.get(source_of.get(m.field, ""), "") or obs.sources.get("speculative", "")
        seen = "none" if m.observed is None else repr(m.observed)
        lines.append(f"  {m.field}: config {m.claimed!r}, server {seen}" + (f" ({src})" if src else ""))
    return "\n".join(lines)


def _is_spec_arg(nk: str) -> bool:
    return nk.startswith(_SPEC_PREFIXES) or nk == "md"


def _passed(value: str | None, argv: list[str]) -> bool:
    """``value`` is on the command line, itself or resolved to a path ending in its last component."""
    if not value:
        return False
    return value in argv or any(a.endswith("/" + value.rsplit("/", 1)[-1]) for a in argv)


def _confirmed_quant(m: ModelConfig, obs: Observed) -> bool:
    seen = obs.extra.get("model_ftype") or obs.extra.get("quantization")
    return bool(m.quantization) and isinstance(seen, str) and _same(m.quantization, seen)


def _served_path(obs: Observed) -> str | None:
    """The reported model as a path, unless it is only a served name (``/v1/models`` ids are names)."""
    return obs.model if obs.sources.get("model", "").split(" ")[0] != "/v1/models" else None


def _target(cfg: RunConfig, obs: Observed, argv: list[str] | None) -> tuple[ModelConfig, ModelConfig]:
    """(full, facts) for the target model."""
    m = cfg.model
    launched = argv is not None
    seen = obs.model if "model" in obs.sources and obs.model else None
    if seen is not None and (not _model_ids(m) or not any(same_model(i, seen) for i in _model_ids(m))):
        model = ModelConfig(name=seen, path=_served_path(obs))  # the config names nothing, or another model
        return model, model
    name_ok = m.name is not None and (
        (seen is not None and same_model(m.name, seen)) or (launched and _passed(m.name, argv or []))
    )
    quant = m.quantization if _confirmed_quant(m, obs) else None
    if launched:
        path = m.path if _passed(m.path, argv or []) else None
        rev = m.revision if _passed(m.revision, argv or []) else None
        full = m.model_copy(update={"path": m.path or path})
        return full, ModelConfig(name=m.name if name_ok else None, path=path, revision=rev, quantization=quant)
    path = _served_path(obs) if seen is not None else None
    full = m.model_copy(update={"path": path or m.path})
    return full, ModelConfig(name=m.name if name_ok else None, path=path, quantization=quant)


def _draft(cfg: RunConfig, obs: Observed, argv: list[str] | None) -> tuple[ModelConfig | None, ModelConfig | None]:
    d = cfg.draft_model
    if "draft_model" in obs.sources:
        seen = obs.draft_model
        if seen is None:
            return None, None
        if d is None or not any(same_model(i, seen) for i in _draft_ids(cfg)):
            model = ModelConfig(name=seen, path=seen)
            return model, model
        name_ok = d.name is not None and same_model(d.name, seen)
        return d.model_copy(update={"path": seen}), ModelConfig(name=d.name if name_ok else None, path=seen)
    if d is None:
        return None, None
    if argv is None:
        return d, None
    return d, ModelConfig(
        name=d.name if _passed(d.name, argv) else None,
        path=d.path if _passed(d.path, argv) else None,
        revision=d.revision if _passed(d.revision, argv) else None,
    )


def _args(
    cfg: RunConfig, engine: EngineBase, intro: Introspection | None, launched: bool, notes: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(full, facts) server arguments."""
    rep = intro.args if intro is not None else {}
    obs = intro.observed if intro is not None else Observed()
    speculating = observed_speculating(obs)

    def key(k: str) -> str:
        n = norm_arg(k)
        return engine.arg_aliases.get(n, n)

    full: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    dropped = []
    for k, v in cfg.server_args.items():
        nk = key(k)
        if speculating is False and _is_spec_arg(nk):
            dropped.append(k)
            continue
        if rep.get(nk) is not None:
            full[k] = facts[k] = rep[nk]
            if not _same(v, rep[nk]):
                notes.append(f"server argument {k}: the config says {v!r}, the server reports {rep[nk]!r} (recorded)")
        else:
            full[k] = v
            if launched:
                facts[k] = v
    if dropped:
        notes.append(f"the server does not speculate: the config's {', '.join(dropped)} are not recorded as its")
    present = {key(k) for k in cfg.server_args}
    for nk, default in engine.reported_defaults.items():
        if nk not in present and rep.get(nk) is not None and not _same(rep[nk], default):
            full[nk] = facts[nk] = rep[nk]
    return full, facts


def _with(
    cfg: RunConfig, args: dict[str, Any], model: ModelConfig, draft: ModelConfig | None, *, extra: bool = True
) -> RunConfig:
    update = {"server_args": args, "model": model, "draft_model": draft}
    return cfg.model_copy(update=update if extra else {**update, "extra_args": []})


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = value


def recorded_args(engine: EngineBase, cfg: RunConfig, launched: bool) -> dict[str, Any]:
    """``server.args``: the launch arguments of a launched run; the config's (overlaid) arguments of an attached
    one (never the defaults the harness would have added to a launch)."""
    return engine.recorded_args(cfg) if launched else EngineBase.recorded_args(engine, cfg)


def derived(engine: EngineBase, cfg: RunConfig, launched: bool) -> dict[str, Any]:
    """The record fields a config gives, flattened to dotted names (what claims are computed over)."""
    out: dict[str, Any] = {}
    spec = engine.speculative(cfg)
    if spec is not None:
        _flat("speculative", spec.model_dump(exclude_none=True), out)
    _flat("environment.features", engine.features(cfg), out)
    _flat("server.args", recorded_args(engine, cfg, launched), out)
    _flat("model", engine.model_label(cfg).model_dump(exclude_none=True, exclude={"conversion"}), out)
    if cfg.draft_model is not None:
        d = cfg.draft_model
        _flat("draft_model", {k: v for k, v in d.model_dump().items() if v is not None}, out)
    return out


def reconcile(
    cfg: RunConfig,
    engine: EngineBase,
    intro: Introspection | None,
    *,
    argv: list[str] | None,
) -> Reconciled:
    """Overlay what the server reports on the config; list the mismatches and the claims.

    ``argv`` is the launch command line of a launched run (None: attached). ``intro`` None: the server was not
    asked (a launched run before its server is up): launch facts only."""
    obs = intro.observed if intro is not None else Observed()
    launched = argv is not None
    notes: list[str] = []
    mismatches = find_mismatches(cfg, engine, obs)
    full_args, fact_args = _args(cfg, engine, intro, launched, notes)
    model_full, model_facts = _target(cfg, obs, argv)
    draft_full, draft_facts = _draft(cfg, obs, argv)
    full = _with(cfg, full_args, model_full, draft_full)
    facts = _with(cfg, fact_args, model_facts, draft_facts, extra=launched)
    if engine.speculative(cfg) is None and observed_speculating(obs):
        alg = obs.speculative_algorithm or "a method it does not name"
        notes.append(f"the config does not mention speculative decoding; the server runs {alg}: recorded as observed")
    have, known = derived(engine, full, launched), derived(engine, facts, launched)
    claims = sorted(k for k, v in have.items() if v is not None and k not in _NOT_CLAIMABLE and known.get(k) != v)
    if "engine" not in obs.sources and not launched:
        claims.insert(0, "server.engine")
    return Reconciled(
        cfg=full,
        engine=obs.engine if "engine" in obs.sources and obs.engine else engine.name,
        mismatches=tuple(mismatches),
        claims=tuple(claims),
        notes=tuple(notes),
        test_server=engine.test_server or obs.engine == TEST_SERVER_ENGINE,
    )
