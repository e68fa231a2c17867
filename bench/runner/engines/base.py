"""What an engine adapter provides: its launch command, readiness, server info, version and speculative settings.

Adapters are small: they turn a :class:`RunConfig` into a command line and read the engine's own endpoints.
They never import the engine; everything goes over HTTP or through the executable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from bench.record.model import ModelRef, Speculative

from ..config import ArgValue, RunConfig

__all__ = [
    "Engine",
    "EngineBase",
    "arg_value",
    "get_json",
    "redact",
    "render_args",
]

_SECRET_KEY = re.compile(
    r"(api[_-]?key|secret|password|passwd|credential|(^|[_-])token$|(^|[_-])auth([_-]|$)|authorization)", re.IGNORECASE
)
REDACTED = "<redacted>"


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

    def server_info(self, client: httpx.Client) -> dict[str, Any] | None: ...

    def version(self, client: httpx.Client, info: Mapping[str, Any] | None, cfg: RunConfig) -> str | None: ...

    def speculative(self, cfg: RunConfig) -> Speculative | None: ...

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]: ...

    def model_ref(self, cfg: RunConfig) -> ModelRef: ...

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


def redact(value: Any) -> Any:
    """A copy with the value of every secret-looking key replaced (server info may echo an api key)."""
    if isinstance(value, Mapping):
        return {
            str(k): (REDACTED if _SECRET_KEY.search(str(k)) and v not in (None, "", False) else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def get_json(client: httpx.Client, path: str) -> Any:
    """GET a JSON endpoint; None on any failure (missing endpoint, bad JSON, connection error)."""
    try:
        resp = client.get(path)
        if resp.status_code != 200:
            return None
        return resp.json()
    except (httpx.HTTPError, ValueError):
        return None


class EngineBase:
    """Defaults shared by every adapter: an OpenAI-compatible server."""

    name = "openai"
    ready_paths: tuple[str, ...] = ("/health", "/v1/models")

    @property
    def test_server(self) -> bool:
        return False

    def command(self, cfg: RunConfig, host: str, port: int) -> list[str] | None:
        return None

    def recorded_args(self, cfg: RunConfig) -> dict[str, Any]:
        args: dict[str, Any] = dict(cfg.server_args)
        if cfg.extra_args:
            args["extra_args"] = list(cfg.extra_args)
        return redact(args)  # type: ignore[no-any-return]

    def is_ready(self, client: httpx.Client) -> bool:
        for path in self.ready_paths:
            try:
                if client.get(path).status_code == 200:
                    return True
            except httpx.HTTPError:
                return False
        return False

    def server_info(self, client: httpx.Client) -> dict[str, Any] | None:
        models = get_json(client, "/v1/models")
        return {"models": redact(models)} if models is not None else None

    def version(self, client: httpx.Client, info: Mapping[str, Any] | None, cfg: RunConfig) -> str | None:
        return None

    def speculative(self, cfg: RunConfig) -> Speculative | None:
        return None

    def features(self, cfg: RunConfig) -> dict[str, bool | str | int | float]:
        return {}

    def model_ref(self, cfg: RunConfig) -> ModelRef:
        m = cfg.model
        return ModelRef(name=m.name, path=m.path, revision=m.revision, quantization=m.quantization)

    def extra_body(self, cfg: RunConfig) -> dict[str, Any]:
        return {}

    def speculative_method(self, cfg: RunConfig) -> str | None:
        return None

    def notes(self, cfg: RunConfig) -> list[str]:
        return []
