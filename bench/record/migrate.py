"""Forward migrations between record schema versions.

Each step ``update_to_N`` takes the raw JSON of version N-1 and returns version N. A record
newer than this code is refused: the only fix is a newer benchbook.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import RecordError
from .model import SCHEMA_VERSION

__all__ = ["MIGRATIONS", "migrate"]

Raw = dict[str, Any]

# MIGRATIONS[N] turns a version N-1 record into version N. Version 1 is the first format,
# so there is nothing to migrate yet; the mechanism is exercised by the tests.
MIGRATIONS: dict[int, Callable[[Raw], Raw]] = {}


def migrate(data: Raw, path: Path | str, *, current: int = SCHEMA_VERSION) -> Raw:
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise RecordError(path, "schema_version", f"an integer schema version (1..{current}), got {version!r}")
    if version > current:
        raise RecordError(
            path,
            "schema_version",
            f"a version this benchbook knows (at most {current}), got {version}: "
            "the record is newer than this code, upgrade benchbook to read it",
        )
    if version < 1:
        raise RecordError(path, "schema_version", f"a version from 1 to {current}, got {version}")
    while version < current:
        step = MIGRATIONS.get(version + 1)
        if step is None:
            raise RecordError(path, "schema_version", f"a migration step to version {version + 1}; none is defined")
        data = step(dict(data))
        version += 1
        data["schema_version"] = version
    return data
