"""What every part of a record shares: the schema version, the caps on free text, strict models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["SCHEMA_VERSION", "SLUG", "TEST_SERVER_ENGINE", "TEXT_LIMITS", "Strict"]

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

TEST_SERVER_ENGINE = "benchbook-testserver"
"""The engine name benchbook's own test server announces (``server.observed.engine``)."""


class Strict(BaseModel):
    """Unknown keys are refused so that a typo cannot silently drop a figure."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
