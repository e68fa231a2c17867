"""What every part of a record shares: the schema version, the caps on free text, strict models."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from bench.redact import looks_like_secret

__all__ = ["SCHEMA_VERSION", "SLUG", "TEST_SERVER_ENGINE", "TEXT_LIMITS", "Name", "Strict"]

SCHEMA_VERSION = 2

TEXT_LIMITS: dict[str, int] = {
    "title": 200,
    "description": 4000,
    "note": 2000,
    "message": 2000,
    "log_excerpt": 8000,
    "error_example": 500,
    "error_examples": 20,
    "tag": 64,
    "tags": 32,
}
"""The longest free text each field takes (characters; ``error_examples`` and ``tags`` count items)."""

SLUG = r"^[a-z0-9][a-z0-9._-]*$"


def _not_secret(value: str) -> str:
    if looks_like_secret(value):
        raise ValueError("a name that does not look like a key or token (it names the record's file and page)")
    return value


Name = Annotated[str, Field(pattern=SLUG, max_length=100), AfterValidator(_not_secret)]
"""An experiment's or a variant's name: it names a record's folder, file and page, so it is a short slug and never
looks like a secret (a config, a record and ``bench import`` all check it with this one type)."""

TEST_SERVER_ENGINE = "benchbook-testserver"
"""The engine name benchbook's own test server announces (``server.observed.engine``)."""


class Strict(BaseModel):
    """Unknown keys are refused so that a typo cannot silently drop a figure."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _share_field_names(cls)


def _share_field_names(cls: type[BaseModel]) -> None:
    """Give the class one table of its field names, shared by the instances that hold their fields as attributes.

    CPython keeps an instance's attributes as a row of values under keys its class shares, where the instance was
    given them one by one in the same order; a dict assigned whole (what pydantic's validation and unpickling do) is
    the instance's own, about twice the memory. The site cache reads models back the first way
    (``bench.site._site_records``: a lean record's models took 62 kB in place of 118 kB at 1,000 records). But the
    interpreter stops adding names to a class's table once a few dozen instances were made without any (CPython
    3.11: ``init_inline_values``), so the names go in here, before the class has an instance."""
    probe = cls.__new__(cls)
    for name in cls.model_fields:
        object.__setattr__(probe, name, None)
