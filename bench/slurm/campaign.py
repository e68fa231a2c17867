"""A campaign: run configs × repeats, run as one Slurm job array. The YAML file, validated, and its tasks.

A campaign lists configs (``configs: [a.yaml, b.yaml]``) or one config and a matrix of ``--set`` overrides
(``config: a.yaml`` + ``matrix: {server_args.draft-max: [2, 4]}``, the product of the lists; or a list of
mappings, one per variant), ``repeats``, overrides applied to every task (``set``), where results go and the
Slurm options. Relative paths are read from the campaign file's folder. Bad input raises
:class:`CampaignError` (``<file>: field '<f>': <expected>``); a config that the campaign's overrides make
invalid is reported against the campaign field that made it (``matrix[1]``, ``set``).

:func:`expand` turns a campaign into its variants (one resolved :class:`RunConfig` each) and its tasks (one per
variant × repeat, numbered from 0: the Slurm array index).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bench.errors import FieldError, parse_mapping, read_yaml_file
from bench.runner.config import ConfigError, RunConfig, load_config

__all__ = [
    "Campaign",
    "CampaignError",
    "CollectorOptions",
    "ServerOptions",
    "SlurmOptions",
    "TaskSpec",
    "VariantSpec",
    "expand",
    "load_campaign",
    "parse_campaign",
]

SLUG = r"^[a-z0-9][a-z0-9._-]*$"
_TIME = r"^([0-9]+-)?[0-9]+(:[0-9]{1,2}){0,2}$"  # Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S
_UNION_BRANCHES = frozenset({"str", "int", "list[str]", "list[any]", "dict[str,list[any]]", "list[dict[str,any]]"})


class CampaignError(FieldError):
    """A bad campaign file: names the file, the field and what was expected."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CollectorOptions(_Strict):
    """The collector job: short, no GPUs. Unset fields take the array's partition and account."""

    partition: str | None = None
    account: str | None = None
    time: str = Field(default="00:30:00", pattern=_TIME)
    extra: list[str] = Field(default_factory=list, description="extra #SBATCH options, e.g. --qos=short")


class SlurmOptions(_Strict):
    """The array's ``#SBATCH`` options. GPUs per task: ``gres`` (``gpu:8``, ``gpu:h200:8``) or ``gpus``."""

    partition: str | None = None
    account: str | None = None
    time: str | None = Field(default=None, pattern=_TIME, description="per task, e.g. 02:00:00")
    nodes: int | None = Field(default=None, ge=1)
    gres: str | None = None
    gpus: str | int | None = None
    cpus_per_task: int | None = Field(default=None, ge=1)
    mem: str | None = None
    constraint: str | None = None
    max_parallel: int | None = Field(default=None, ge=1, description="at most this many tasks at once (%N)")
    signal: str | None = Field(
        default="B:TERM@120",
        description="sent this long before the time limit, so bench run ends the sweep and keeps finished levels",
    )
    extra: list[str] = Field(default_factory=list, description="extra #SBATCH options, one per line")
    collector: CollectorOptions = Field(default_factory=CollectorOptions)

    @field_validator("extra")
    @classmethod
    def _options(cls, v: list[str]) -> list[str]:
        for line in v:
            if not line.startswith("-") or "\n" in line:
                raise ValueError(f"one sbatch option per entry, starting with '-' (got {line!r})")
        return v


class ServerOptions(_Strict):
    """Attach mode: each task starts this server on its node, waits until it is ready, then runs ``bench run
    --url`` against it and stops it. ``{port}`` in the command is replaced by a free port."""

    command: list[str] = Field(min_length=1)
    host: str = "127.0.0.1"
    ready_timeout_s: float = Field(default=900.0, gt=0)

    @field_validator("command")
    @classmethod
    def _port(cls, v: list[str]) -> list[str]:
        if not any("{port}" in a for a in v):
            raise ValueError("the command must contain {port} (where the server listens)")
        return v


class Campaign(_Strict):
    name: str = Field(pattern=SLUG, max_length=60)
    configs: list[str] = Field(default_factory=list)
    config: str | None = None
    matrix: dict[str, list[Any]] | list[dict[str, Any]] | None = None
    set: dict[str, Any] = Field(default_factory=dict, description="--set overrides applied to every task")
    repeats: int = Field(default=1, ge=1, le=1000)
    results: str | None = Field(default=None, description="shared folder for records and logs")
    python: str | None = Field(default=None, description="the interpreter on the nodes (default: this one)")
    commit: str | None = Field(default=None, description="the collector commits the records on this branch")
    slurm: SlurmOptions = Field(default_factory=SlurmOptions)
    server: ServerOptions | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Campaign:
        if bool(self.configs) == (self.config is not None):
            raise ValueError("give either 'configs' (a list of config files) or 'config' (one file, with a matrix)")
        if self.matrix is not None and self.config is None:
            raise ValueError("'matrix' needs 'config' (one config whose values the matrix overrides)")
        if isinstance(self.matrix, dict):
            for key, values in self.matrix.items():
                if not values:
                    raise ValueError(f"matrix key {key!r} needs at least one value")
        return self


@dataclass(frozen=True)
class VariantSpec:
    """One configuration of the campaign: the config it comes from, the overrides, the resolved config."""

    source: Path
    overrides: tuple[tuple[str, Any], ...]
    config: RunConfig
    origin: str  # the campaign field that defines it: configs[0], matrix[1], config

    @property
    def key(self) -> str:
        return f"{self.config.experiment}.{self.config.variant}"


@dataclass(frozen=True)
class TaskSpec:
    index: int
    variant: VariantSpec
    repeat: int


def parse_campaign(data: Any, path: Path | str) -> Campaign:
    what = "a YAML mapping of campaign fields"
    return parse_mapping(Campaign, data, path, CampaignError, what=what, skip=_UNION_BRANCHES)


def load_campaign(path: Path) -> Campaign:
    return parse_campaign(read_yaml_file(path, CampaignError, what="a readable UTF-8 YAML file"), path)


def _slug(value: Any) -> str:
    text = re.sub(r"[^a-z0-9._-]+", "-", str(value).lower()).strip("-._")
    return text or "x"


def _derived_variant(base: str, row: Mapping[str, Any]) -> str:
    """``ngram`` + ``{server_args.draft-max: 4}`` -> ``ngram-draft-max-4``."""
    parts = [base] + [f"{_slug(key.rsplit('.', 1)[-1])}-{_slug(value)}" for key, value in row.items()]
    return "-".join(parts)[:100]


def _matrix_rows(campaign: Campaign) -> list[dict[str, Any]]:
    if campaign.matrix is None:
        return [{}]
    if isinstance(campaign.matrix, list):
        return [dict(row) for row in campaign.matrix]
    keys = list(campaign.matrix)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*campaign.matrix.values())]


def _resolve(
    campaign_path: Path,
    folder: Path,
    file: str,
    origin: str,
    common: Sequence[tuple[str, Any]],
    row: Sequence[tuple[str, Any]] = (),
) -> RunConfig:
    """The config with the campaign's overrides; an error names the campaign field to blame: the config
    entry (the file itself is bad), ``set`` (the common overrides) or the matrix row."""
    source = (folder / file).resolve()
    if not source.is_file():
        raise CampaignError(campaign_path, origin, f"an existing config file (no file at {source})")
    steps: list[tuple[str, list[tuple[str, Any]]]] = [(origin, []), ("set", list(common))]
    if row:
        steps.append((origin, [*common, *row]))
    cfg: RunConfig | None = None
    for blame, overrides in steps:
        try:
            cfg = load_config(source, overrides)
        except ConfigError as exc:
            what = "a valid run config" if not overrides else "overrides that keep the config valid"
            raise CampaignError(campaign_path, blame, f"{what} ({exc})") from None
    assert cfg is not None
    return cfg


def expand(campaign: Campaign, campaign_path: Path) -> tuple[list[VariantSpec], list[TaskSpec]]:
    """The campaign's variants and its tasks (variant-major: all repeats of variant 0 first)."""
    folder = campaign_path.resolve().parent
    common = list(campaign.set.items())
    variants: list[VariantSpec] = []
    if campaign.configs:
        for i, file in enumerate(campaign.configs):
            origin = f"configs[{i}]"
            cfg = _resolve(campaign_path, folder, file, origin, common)
            variants.append(VariantSpec((folder / file).resolve(), tuple(common), cfg, origin))
    else:
        assert campaign.config is not None  # validated
        base = _resolve(campaign_path, folder, campaign.config, "config", common)
        rows = _matrix_rows(campaign)
        for i, row in enumerate(rows):
            origin = f"matrix[{i}]" if campaign.matrix is not None else "config"
            own = list(row.items())
            if campaign.matrix is not None and "variant" not in row:
                own.append(("variant", _derived_variant(base.variant, row)))
            cfg = _resolve(campaign_path, folder, campaign.config, origin, common, own)
            overrides = (*common, *own)
            variants.append(VariantSpec((folder / campaign.config).resolve(), overrides, cfg, origin))
    seen: dict[str, str] = {}
    for v in variants:
        if v.key in seen:
            raise CampaignError(
                campaign_path, v.origin, f"a variant distinct from {seen[v.key]} (both are {v.key}: set 'variant')"
            )
        seen[v.key] = v.origin
    tasks = [
        TaskSpec(index=i * campaign.repeats + r, variant=v, repeat=r)
        for i, v in enumerate(variants)
        for r in range(campaign.repeats)
    ]
    return variants, tasks
