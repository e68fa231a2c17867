"""The environment diff: every field in which two records differ, levels, ids and timestamps aside.

A value that only the run config states (``Record.claims``) is flagged ``claimed_a`` / ``claimed_b`` so that
``bench diff`` and the site can mark it; the claims list itself and the stored recipe are not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.record.model import Record

from ._context import Role, role_of

__all__ = ["IGNORED_FIELDS", "FieldDiff", "environment_diff", "flatten_record"]

# Fields that identify a record or its measurements rather than describe its set-up.
IGNORED_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "created_at",
        "levels",
        "provenance.measured_at",
        "schema_version",
        "claims",  # shown as marks on the claimed values
        "recipe.config",  # how to measure again, not what was measured
        "recipe.command",
        "recipe.overrides",
        "recipe.config_path",
    }
)


@dataclass(frozen=True)
class FieldDiff:
    """One differing field: its dotted name, both values (``None`` = not stated) and its role."""

    field: str
    a: Any
    b: Any
    role: Role
    claimed_a: bool = False
    claimed_b: bool = False


_IGNORED_PREFIXES = tuple(f"{f}." for f in sorted(IGNORED_FIELDS))


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, Mapping):
        return  # an empty mapping states nothing
    else:
        out[prefix] = value


def flatten_record(record: Record) -> dict[str, Any]:
    """The record as dotted name -> JSON value (lists stay whole), without ``IGNORED_FIELDS``."""
    top = {f for f in IGNORED_FIELDS if "." not in f}  # never dumped: the levels and their samples are most of a record
    data = record.model_dump(mode="json", exclude_none=True, exclude=top)
    out: dict[str, Any] = {}
    _flatten(data, "", out)
    return {k: v for k, v in out.items() if k not in IGNORED_FIELDS and not k.startswith(_IGNORED_PREFIXES)}


def environment_diff(a: Record, b: Record) -> list[FieldDiff]:
    """Every field whose value differs between ``a`` and ``b`` (a field only one states has ``None`` on the other).

    Context fields come first, then info fields; each group sorted by name.
    """
    fa, fb = flatten_record(a), flatten_record(b)
    rows = [
        FieldDiff(k, fa.get(k), fb.get(k), role_of(k), a.is_claimed(k) and k in fa, b.is_claimed(k) and k in fb)
        for k in sorted(fa.keys() | fb.keys())
        if fa.get(k) != fb.get(k)
    ]
    return sorted(rows, key=lambda r: (r.role != "context", r.field))
