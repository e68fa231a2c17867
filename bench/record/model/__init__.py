"""The benchmark record, schema version 2: one JSON file per run.

Conventions
-----------
* A field the source does not state is ``None`` (rendered "not stated"), never guessed.
* Every metric carries the name of the formula that produced it (and, where it matters, its source).
* Times are milliseconds, throughputs tokens (or requests) per second.
* What the server reported about itself is *observed* (``server.observed``); a field whose value only the
  run config states is listed in ``claims`` (rendered "claimed"). Where config and server disagreed and the
  run went on anyway (``--allow-mismatch``), ``mismatches`` keeps both values.
* Numbers are finite: NaN and Infinity are refused with the file and the field.
* Free text is capped (``TEXT_LIMITS``) so that one record cannot swell every page that lists it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ._base import SCHEMA_VERSION, SLUG, TEST_SERVER_ENGINE, TEXT_LIMITS, Name, Strict
from ._level import ClientLoad, Level, LevelErrors, LevelSpeculative, Metric, PrefixCache, Samples, TokenCounts
from ._run import (
    Benchbook,
    Environment,
    Gpu,
    Mismatch,
    ModelRef,
    Observed,
    Provenance,
    Recipe,
    Server,
    Speculative,
    Status,
    Workload,
)

__all__ = [
    "SCHEMA_VERSION",
    "SLUG",
    "TEST_SERVER_ENGINE",
    "TEXT_LIMITS",
    "Benchbook",
    "ClientLoad",
    "Environment",
    "Gpu",
    "Level",
    "LevelErrors",
    "LevelSpeculative",
    "Metric",
    "Mismatch",
    "ModelRef",
    "Name",
    "Observed",
    "PrefixCache",
    "Provenance",
    "Recipe",
    "Record",
    "Samples",
    "Server",
    "Speculative",
    "Status",
    "TokenCounts",
    "Workload",
]


class Record(Strict):
    schema_version: Literal[2] = 2
    id: str = Field(pattern=r"^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9._-]*-[0-9a-f]{7,12}$", max_length=160)
    experiment: Name
    variant: Name
    title: str | None = Field(default=None, max_length=TEXT_LIMITS["title"])
    description: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])
    created_at: datetime
    provenance: Provenance
    benchbook: Benchbook = Field(default_factory=Benchbook)
    server: Server
    model: ModelRef
    draft_model: ModelRef | None = None
    speculative: Speculative | None = None
    environment: Environment = Field(default_factory=Environment)
    workload: Workload
    levels: list[Level]
    status: Status
    tags: list[Annotated[str, Field(max_length=TEXT_LIMITS["tag"])]] = Field(
        default_factory=list, max_length=TEXT_LIMITS["tags"]
    )
    run_group: str | None = Field(
        default=None, max_length=200, description="records of one configuration measured together"
    )
    claims: list[str] = Field(
        default_factory=list,
        description="dotted fields whose values only the run config states: the server did not report them",
    )
    mismatches: list[Mismatch] = Field(
        default_factory=list, description="config vs server disagreements kept with --allow-mismatch"
    )
    recipe: Recipe | None = None

    @field_validator("created_at")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        if v.tzinfo is None or v.utcoffset() is None or v.utcoffset().total_seconds() != 0:  # type: ignore[union-attr]
            raise ValueError("created_at must be a UTC timestamp ending in Z or +00:00")
        return v

    @model_validator(mode="after")
    def _id_matches(self) -> Record:
        if f"-{self.variant}-" not in self.id:
            raise ValueError(f"id {self.id!r} must contain the variant {self.variant!r}")
        seen: set[str] = set()
        for lv in self.levels:
            if lv.key in seen:
                raise ValueError(f"level {lv.key} appears twice")
            seen.add(lv.key)
        observed = self.server.observed
        if observed is not None and observed.engine == TEST_SERVER_ENGINE and not self.provenance.test_server:
            raise ValueError(
                "the server identified itself as benchbook's test server: provenance.test_server must be true"
            )
        return self

    @property
    def is_speculative(self) -> bool:
        return self.speculative is not None and self.speculative.algorithm is not None

    def is_claimed(self, field: str) -> bool:
        """True when ``field`` (dotted) or a parent of it is listed in ``claims``."""
        return any(field == c or field.startswith(c + ".") for c in self.claims)
