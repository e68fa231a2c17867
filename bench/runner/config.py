"""Experiment configuration for ``bench run``: one YAML file per variant, validated with pydantic.

A config names the engine, the model, every server argument, the workload and the sweep. Command-line
flags override any value (``--set key.path=value`` is the generic form). Bad input raises
:class:`ConfigError`, which names the file, the field and what was expected.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bench.errors import FieldError, parse_mapping, read_yaml_file
from bench.record.model import Name

__all__ = [
    "DEFAULT_LEVELS",
    "ConfigError",
    "ModelConfig",
    "RunConfig",
    "apply_overrides",
    "load_config",
    "parse_config",
    "parse_set",
    "url_problem",
]

_UNION_BRANCHES = frozenset({"int", "str", "function-after"})
DEFAULT_LEVELS = (1, 2, 4, 8, 16, 32, 64, 128, 250)
_MULTIPLE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*x\s*$")

Scalar = str | int | float | bool | None
ArgValue = Scalar | list[str | int | float]


class ConfigError(FieldError):
    """A bad config: names the file, the field and what was expected."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelConfig(_Strict):
    name: str | None = None
    path: str | None = Field(
        default=None,
        description="a path or hub id; 'package:<dist>/<file>' names a file inside an installed Python package",
    )
    revision: str | None = None
    quantization: str | None = None


class RunConfig(_Strict):
    """One experiment variant: what to launch and how to sweep it."""

    experiment: Name
    variant: Name
    title: str | None = None
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    run_group: str | None = None

    engine: Literal["sglang", "openai", "llamacpp", "testserver"]
    model: ModelConfig = Field(default_factory=ModelConfig)
    draft_model: ModelConfig | None = None
    server_args: dict[str, ArgValue] = Field(
        default_factory=dict, description="server arguments by name (without leading dashes); true = bare flag"
    )
    extra_args: list[str] = Field(default_factory=list, description="raw arguments appended to the command line")
    server_env: dict[str, str] = Field(default_factory=dict, description="environment variables set for the server")
    binary: str | None = Field(default=None, description="engine executable (llama-server) or Python (sglang)")
    host: str = "127.0.0.1"
    port: int | None = Field(default=None, ge=1, le=65535, description="None: a free port is picked")
    url: str | None = Field(default=None, description="attach to this running server instead of launching one")
    ready_timeout_s: float = Field(default=900.0, gt=0, description="a launched server must be ready within this")
    request_timeout_s: float = Field(
        default=600.0, gt=0, description="one request, sent to last byte; past it the request fails as 'timeout'"
    )
    stop_timeout_s: float = Field(
        default=10.0, gt=0, description="a launched server gets this long after SIGTERM before SIGKILL"
    )

    prompt_set: str
    api: Literal["chat", "completions", "generate"] = "chat"
    levels: list[int] = Field(default_factory=lambda: list(DEFAULT_LEVELS), min_length=1)
    requests_per_level: int | str = Field(default="10x", description="a count, or 'Nx' = N x concurrency")
    min_requests: int = Field(default=10, ge=1, description="floor for 'Nx' request counts")
    warmup: int | str = Field(default="2x", description="warm-up requests per level: a count or 'Nx'")
    max_warmup: int = Field(default=500, ge=0, description="cap on warm-up requests per level")
    max_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=0.0, ge=0)
    ignore_eos: bool = False
    seed: int | None = None
    prefix: Literal["unique", "repeated"] = Field(
        default="unique",
        description="unique: every request opens with its own short marker, so repeats of a prompt cannot be "
        "served from a prefix cache; repeated: prompts are sent as written (see bench/runner/_workload.py)",
    )
    error_threshold: float = Field(default=0.05, ge=0, le=1)
    client_processes: int = Field(
        default=1,
        ge=1,
        le=256,
        description="client processes that share each level (bench/runner/shards.py): one Python process reads "
        "streams on one core; a fast server on a many-core host needs several. One record either way",
    )
    records_dir: str = "records"

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        problem = url_problem(v)
        if problem is not None:
            raise ValueError(problem)
        return v.strip()

    @field_validator("levels")
    @classmethod
    def _levels(cls, v: list[int]) -> list[int]:
        if any(c < 1 for c in v):
            raise ValueError("every level must be a concurrency >= 1")
        if len(set(v)) != len(v):
            raise ValueError("levels must not repeat")
        return v

    @field_validator("requests_per_level", "warmup")
    @classmethod
    def _count_or_multiple(cls, v: int | str) -> int | str:
        if isinstance(v, int):
            if v < 0:
                raise ValueError("must be >= 0")
            return v
        if not _MULTIPLE.match(v):
            raise ValueError("a number or 'Nx' (N times the concurrency), e.g. 10 or '10x'")
        return v.strip()

    def requests_for(self, concurrency: int) -> int:
        """Measured requests at one level."""
        return _resolve(self.requests_per_level, concurrency, floor=self.min_requests)

    def warmup_for(self, concurrency: int) -> int:
        """Warm-up requests at one level (outside the measured window)."""
        return min(_resolve(self.warmup, concurrency, floor=0), self.max_warmup)


def url_problem(url: str) -> str | None:
    """What is wrong with a server URL (None: nothing). The URL itself is never repeated: it may hold a password."""
    expected = "an http:// or https:// URL with a host and a port in 1..65535, e.g. http://127.0.0.1:30000"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        return f"{expected} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        return expected
    return None


def _resolve(value: int | str, concurrency: int, *, floor: int) -> int:
    if isinstance(value, int):
        return value
    m = _MULTIPLE.match(value)
    assert m is not None  # validated
    return max(floor, round(float(m.group(1)) * concurrency))


def parse_set(item: str) -> tuple[str, Any]:
    """``key.path=value`` -> (key.path, value); the value is read as YAML (``1``, ``true``, ``[1, 2]``)."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or not all(key.split(".")):
        raise ConfigError("--set", item, "key.path=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError("--set", key, f"a YAML value ({exc})") from None
    return key, value


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """A copy of ``data`` with each dotted key set; intermediate mappings are created as needed."""
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for key, value in overrides:
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigError("--set", key, f"'{part}' to be a mapping, it is {json.dumps(child)}")
            node = child
        node[parts[-1]] = value
    return out


_CONFIG_MAPPING = "a YAML mapping of config fields"


def parse_config(data: Any, path: Path | str) -> RunConfig:
    return parse_mapping(RunConfig, data, path, ConfigError, what=_CONFIG_MAPPING, skip=_UNION_BRANCHES)


def load_config(path: Path, overrides: Sequence[tuple[str, Any]] = ()) -> RunConfig:
    """Read, override and validate one config file."""
    data = read_yaml_file(path, ConfigError, what="a readable UTF-8 YAML file")
    if data is not None and not isinstance(data, dict):
        raise ConfigError(path, "", f"{_CONFIG_MAPPING}, got {type(data).__name__}")
    return parse_config(apply_overrides(data or {}, overrides), path)
