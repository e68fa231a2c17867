"""What an engine adapter provides: its launch command, readiness, what the server says it is, its version and
its speculative settings.

Adapters are small: they turn a :class:`RunConfig` into a command line and read the engine's own endpoints.
They never import the engine; everything goes over HTTP or through the executable. :meth:`EngineBase.introspect`
asks a running server what it is (``bench.runner.engines.introspect``); whatever an adapter stores passes
``bench.redact.redact_value``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import httpx

from bench.record.model import ModelRef, Speculative
from bench.redact import redact_value

from ..config import ArgValue, RunConfig

if TYPE_CHECKING:
    from .introspect import Introspection, Probe

__all__ = [
    "Engine",
    "EngineBase",
    "arg_value",
    "norm_arg",
    "render_args",
]


class Engine(Protocol):
    """The engine interface the sweep uses."""

    name: str

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str] | None:
        """The launch command line, or None if this engine cannot be launched (attach only)."""
        ...

    def recorded_args(self, cfg: RunConfig) -> dict[str, Any]:
        """Every server argument, by name, as recorded."""
        ...

    def is_ready(self, client: httpx.Client) -> bool: ...

    def introspect(self, client: httpx.Client) -> Introspection: ...

    def launched_version(self, cfg: RunConfig) -> str | None:
        """The version the harness knows from what it launches (an executable's ``--version``), else None."""
        ...

    def launched_versions(self, cfg: RunConfig) -> dict[str, str]:
        """``environment.versions`` entries read from what the harness launches (build number, commit...)."""
        ...

    def speculative(self, cfg: RunConfig) -> Speculative | None: ...

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]: ...

    def model_ref(self, cfg: RunConfig) -> ModelRef: ...

    def model_label(self, cfg: RunConfig) -> ModelRef: ...

    def extra_body(self, cfg: RunConfig) -> dict[str, Any]: ...

    def speculative_method(self, cfg: RunConfig) -> str | None: ...

    def notes(self, cfg: RunConfig) -> list[str]: ...

    @property
    def test_server(self) -> bool: ...


def arg_value(args: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` present in ``args`` (names may be given with or without dashes)."""
    for n in names:
        for key in (n, n.lstrip("-"), n.lstrip("-").replace("-", "_"), n.lstrip("-").replace("_", "-")):
            if key in args:
                return args[key]
    return None


def render_args(args: Mapping[str, ArgValue]) -> list[str]:
    """``{"tp": 8, "enable-x": True, "off": False, "list": [1, 2]}`` -> ``--tp 8 --enable-x --list 1 2``.

    One-letter keys get one dash (``np`` and longer get two; write ``-np`` explicitly to force one).
    False and None omit the flag.
    """
    out: list[str] = []
    for key, value in args.items():
        if value is None or value is False:
            continue
        flag = key if key.startswith("-") else (f"-{key}" if len(key) == 1 else f"--{key}")
        if value is True:
            out.append(flag)
        elif isinstance(value, list):
            out.append(flag)
            out += [str(v) for v in value]
        else:
            out += [flag, str(value)]
    return out


def norm_arg(name: str) -> str:
    """``--tp_size`` / ``tp-size`` -> ``tp-size``: one spelling for a server argument's name."""
    return name.lstrip("-").replace("_", "-").lower()


class EngineBase:
    """Defaults shared by every adapter: an OpenAI-compatible server."""

    name = "openai"
    ready_paths: tuple[str, ...] = ("/health", "/v1/models")
    arg_aliases: ClassVar[dict[str, str]] = {}
    """Other spellings of a server argument -> the name the server reports it under (``tp`` -> ``tp-size``)."""
    reported_defaults: ClassVar[dict[str, Any]] = {}
    """Reported arguments a record keeps although the config does not name them, when not at this default."""

    @property
    def test_server(self) -> bool:
        return False

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str] | None:
        return None

    def recorded_args(self, cfg: RunConfig) -> dict[str, Any]:
        args: dict[str, Any] = dict(cfg.server_args)
        if cfg.extra_args:
            args["extra_args"] = list(cfg.extra_args)
        return redact_value("server_args", args)  # type: ignore[no-any-return]

    def is_ready(self, client: httpx.Client) -> bool:
        for path in self.ready_paths:
            try:
                if client.get(path).status_code == 200:
                    return True
            except httpx.HTTPError:
                return False
        return False

    def introspect(self, client: httpx.Client) -> Introspection:
        """Ask the server what it is: engine, version, model, parallelism, speculative settings (``Observed``),
        whatever engine the config names (a server of another kind, or the test server, is told apart)."""
        from .introspect import introspect

        return introspect(client, self.name)

    @classmethod
    def probe(cls, p: Probe) -> None:
        """Read this engine's own info endpoints into ``p`` (the base: nothing beyond ``/v1/models``)."""

    def launched_version(self, cfg: RunConfig) -> str | None:
        return None

    def launched_versions(self, cfg: RunConfig) -> dict[str, str]:
        return {}

    def speculative(self, cfg: RunConfig) -> Speculative | None:
        return None

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]:
        return {}

    def model_ref(self, cfg: RunConfig) -> ModelRef:
        """The target model as recorded for a launched run (may read the weights file to fingerprint it)."""
        return self.model_label(cfg)

    def model_label(self, cfg: RunConfig) -> ModelRef:
        """The target model as the config names it, without touching any file."""
        m = cfg.model
        return ModelRef(name=m.name, path=m.path, revision=m.revision, quantization=m.quantization)

    def extra_body(self, cfg: RunConfig) -> dict[str, Any]:
        return {}

    def speculative_method(self, cfg: RunConfig) -> str | None:
        return None

    def notes(self, cfg: RunConfig) -> list[str]:
        return []
