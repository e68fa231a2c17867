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

# Fields a version-1 run config set on an attached run (``server.command`` absent): version 1 copied them into the
# record as fact although the server never confirmed them. Version 2 lists them in ``claims``.
_V1_ATTACHED_CLAIMS = (
    "model.name",
    "model.revision",
    "model.quantization",
    "draft_model",
    "speculative",
    "server.args",
)


def update_to_2(data: Raw) -> Raw:
    """Version 1 -> 2: new optional fields only (observed server facts, claims, recipes, level failures, prefix
    cache, capped free text). A measured v1 record of an attached run gets ``claims`` for what its config set,
    a measured v1 record states ``workload.prefix: repeated`` (the v1 harness sent prompts as written), and a
    level that v1 flagged for its error rate becomes a failed level."""
    out = dict(data)
    prov: Raw = out["provenance"] if isinstance(out.get("provenance"), dict) else {}
    server: Raw = out["server"] if isinstance(out.get("server"), dict) else {}
    if prov.get("kind") == "measured" and not server.get("command"):
        claims = []
        for name in _V1_ATTACHED_CLAIMS:
            head, _, tail = name.partition(".")
            value = out.get(head)
            if tail and isinstance(value, dict):
                value = value.get(tail)
            if value not in (None, {}, [], ""):
                claims.append(name)
        if claims:
            out["claims"] = claims
    workload = out.get("workload")
    if prov.get("kind") == "measured" and isinstance(workload, dict) and "prefix" not in workload:
        # benchbook's harness before schema 2 sent every prompt exactly as written
        out["workload"] = {**workload, "prefix": "repeated"}
    levels = out.get("levels")
    if isinstance(levels, list):
        new_levels = []
        for lv in levels:
            errors = lv.get("errors") if isinstance(lv, dict) else None
            if isinstance(errors, dict) and errors.get("flagged") is True and "failure" not in lv:
                rate = errors.get("error_rate")
                shown = f"{rate:.0%}" if isinstance(rate, int | float) else "unknown"
                lv = {**lv, "failure": f"error rate {shown} above the run's threshold (flagged by schema v1)"}
            new_levels.append(lv)
        out["levels"] = new_levels
    return out


# MIGRATIONS[N] turns a version N-1 record into version N.
MIGRATIONS: dict[int, Callable[[Raw], Raw]] = {2: update_to_2}


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
