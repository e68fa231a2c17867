"""The record fields that come from asking the server (``bench.runner._claims`` decides what is fact).

``observe`` builds everything a record states about its server — ``server`` (with ``observed`` and the engine's
own payload), ``model``, ``draft_model``, ``speculative``, ``environment`` features and versions, ``claims``,
``mismatches``, ``provenance.test_server`` — from a :class:`~bench.runner._claims.Reconciled`; ``apply`` puts them
into a record. A launched run calls it twice (before the launch with the launch facts only, after the server is
ready with what it reports); an attached run once, before its record file exists.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.record.model import Environment, Mismatch, ModelRef, Observed, Record, Server, Speculative
from bench.redact import redact_argv, redact_text, redact_value

from ._claims import Reconciled, mismatch_message, observed_speculating, recorded_args
from .config import RunConfig
from .engines import EngineBase
from .engines.introspect import Introspection
from .engines.modelfile import local_weights

__all__ = ["MismatchError", "Observation", "apply", "ask", "loopback", "mismatch_error", "observe"]


class MismatchError(Exception):
    """The server is not what the config says (and ``--allow-mismatch`` was not given): nothing was measured."""

    def __init__(self, message: str, mismatches: tuple[Mismatch, ...]) -> None:
        super().__init__(message)
        self.mismatches = mismatches


@dataclass(frozen=True)
class Observation:
    """Record fields that come from the config as reconciled with the server."""

    server: Server
    model: ModelRef
    draft_model: ModelRef | None
    speculative: Speculative | None
    environment: Environment
    claims: tuple[str, ...]
    mismatches: tuple[Mismatch, ...]
    test_server: bool


def ask(engine: EngineBase, url: str, timeout_s: float = 30.0) -> Introspection | None:
    """Readiness, then introspection, of the server at ``url``; None when it is not ready."""
    with httpx.Client(base_url=url, timeout=timeout_s) as http:
        if not engine.is_ready(http):
            return None
        return engine.introspect(http)


def mismatch_error(rec: Reconciled, obs: Observed, url: str, *, launched: bool) -> MismatchError:
    what = (
        "the server launched from this config does not run what it says"
        if launched
        else (f"the server at {redact_text(url)} is not what the config says")
    )
    done = "nothing was measured" if launched else "nothing was measured and no record was written"
    message = (
        f"{what} ({done}):\n{mismatch_message(rec.mismatches, obs)}\n"
        "Point --url at the server the config describes, correct the config (or --set the field), or give "
        "--allow-mismatch to measure anyway: the record then keeps both values and states the server's."
    )
    return MismatchError(message, rec.mismatches)


def loopback(url: str) -> bool:
    """The URL's host is this machine."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _fingerprinted(ref: ModelRef, *, launched: bool, url: str) -> ModelRef:
    """``ref`` with the sha256 (and a converted or trained model's provenance file) of the weights at its path,
    read on this host: for a launched run, or for an attached server on this host (a loopback URL) whose
    reported path this is. Anything already stated (a GGUF's own fingerprint) is kept."""
    path = Path(ref.path) if ref.path else None
    if path is None or not path.is_absolute() or not (launched or loopback(url)):
        return ref
    found = {k: v for k, v in local_weights(path).items() if not getattr(ref, k)}
    return ref.model_copy(update=found) if found else ref


def _model(engine: EngineBase, cfg: RunConfig, *, launched: bool, url: str) -> ModelRef:
    """A launched run fingerprints the weights it passed; an attached one only the weights the server reports
    loading, when they are on this host (a loopback URL)."""
    return _fingerprinted(engine.model_ref(cfg) if launched else engine.model_label(cfg), launched=launched, url=url)


def _speculative(engine: EngineBase, cfg: RunConfig, obs: Observed | None) -> Speculative | None:
    spec = engine.speculative(cfg)
    if spec is None and obs is not None and observed_speculating(obs):
        return Speculative(
            algorithm=obs.speculative_algorithm or "unknown",
            notes=f"the server reports speculative decoding ({obs.sources.get('speculative') or 'server info'}) "
            "but not all of its settings",
        )
    return spec


def observe(
    engine: EngineBase,
    rec: Reconciled,
    intro: Introspection | None,
    *,
    url: str,
    command: list[str] | None,
    base_environment: Environment,
    notes: list[str],
) -> Observation:
    launched = command is not None
    cfg = rec.cfg
    obs = intro.observed if intro is not None else None
    version = engine.launched_version(cfg) if launched else None
    if version is None and obs is not None and "version" in obs.sources:
        version = obs.version
    args = dict(recorded_args(engine, cfg, launched))
    if isinstance(args.get("extra_args"), list):  # raw arguments: redacted as a command line
        args["extra_args"] = redact_argv([str(a) for a in args["extra_args"]])
    server = Server(
        engine=rec.engine,
        version=version,
        url=redact_text(url),
        command=redact_argv(command) if command is not None else None,
        args=redact_value("", args),
        server_info=intro.info if intro is not None else None,
        observed=obs,
        notes=redact_value("notes", [*engine.notes(cfg), *rec.notes, *notes]),
    )
    draft = cfg.draft_model
    reported = intro.versions if intro is not None else {}
    if launched:
        versions = {**reported, **base_environment.versions, **engine.launched_versions(cfg)}
        env_claims: list[str] = []
    else:  # what an attached server reports wins; what this host's Python says is the config's word
        versions = {**base_environment.versions, **reported}
        env_claims = [f"environment.versions.{k}" for k in sorted(versions) if k not in reported]
        env_claims += [f"environment.{k}" for k in ("cuda_runtime", "nccl_version") if getattr(base_environment, k)]
    environment = base_environment.model_copy(
        update={"features": {**base_environment.features, **engine.features(cfg)}, "versions": versions}
    )
    return Observation(
        server=server,
        model=_model(engine, cfg, launched=launched, url=url),
        draft_model=None
        if draft is None
        else _fingerprinted(
            ModelRef(name=draft.name, path=draft.path, revision=draft.revision, quantization=draft.quantization),
            launched=launched,
            url=url,
        ),
        speculative=_speculative(engine, cfg, obs),
        environment=Environment.model_validate(environment.model_dump()),
        claims=tuple(sorted({*rec.claims, *env_claims})),
        mismatches=tuple(
            Mismatch(field=m.field, claimed=redact_value("", m.claimed), observed=redact_value("", m.observed))
            for m in rec.mismatches
        ),
        test_server=rec.test_server,
    )


def apply(record: Record, o: Observation, **update: Any) -> Record:
    """``record`` with the observation's fields (and ``update``), validated again."""
    data = record.model_dump()
    data.update(
        server=o.server.model_dump(),
        model=o.model.model_dump(),
        draft_model=o.draft_model.model_dump() if o.draft_model is not None else None,
        speculative=o.speculative.model_dump() if o.speculative is not None else None,
        environment=o.environment.model_dump(),
        claims=list(o.claims),
        mismatches=[m.model_dump() for m in o.mismatches],
        **update,
    )
    data["provenance"] = {**data["provenance"], "test_server": o.test_server}
    return Record.model_validate(data)
