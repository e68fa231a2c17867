"""The environment diff: every field in which two records differ, levels, ids and timestamps aside.

A value that only the run config states (``Record.claims``) is flagged ``claimed_a`` / ``claimed_b`` so that
``bench diff`` and the site can mark it; the claims list itself and the stored recipe are not compared.
"""

from __future__ import annotations

import weakref
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
    if type(value) is dict or isinstance(value, Mapping):  # a dump holds dicts: no ABC check for them
        if not value:
            return  # an empty mapping states nothing
        for k, v in value.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            if type(v) is dict or isinstance(v, Mapping):
                _flatten(v, name, out)
            else:
                out[name] = v
    else:
        out[prefix] = value


def _flattened(record: Record) -> dict[str, Any]:
    top = {f for f in IGNORED_FIELDS if "." not in f}  # never dumped: the levels and their samples are most of a record
    data = record.model_dump(mode="json", exclude_none=True, exclude=top)
    out: dict[str, Any] = {}
    _flatten(data, "", out)
    return {k: v for k, v in out.items() if k not in IGNORED_FIELDS and not k.startswith(_IGNORED_PREFIXES)}


# Record object -> its flattened fields, while the object lives, for the last FLAT_KEPT records asked for. A site build
# diffs each record against the one before it in its configuration and against its experiment's baseline, so most
# records are flattened two or three times, mostly close together; a record is frozen, so its flattening cannot
# change. Keyed by the object's id, dropped when the object is collected (before its id can be reused); a flattened
# record is about 70 kB, so the memo stays small whatever the number of records.
FLAT_KEPT = 128  # a record page diffs against the record a few before it in its experiment: 128 is plenty (9 MB)
_FLAT: dict[int, tuple[weakref.ref[Record], dict[str, Any]]] = {}


def _flat(record: Record) -> dict[str, Any]:
    """:func:`flatten_record`, remembered for this record object (callers must not change the dict)."""
    key = id(record)
    kept = _FLAT.pop(key, None)
    if kept is not None and kept[0]() is record:
        _FLAT[key] = kept  # the most recent last
        return kept[1]
    flat = _flattened(record)

    def forget(_: weakref.ref[Record]) -> None:
        _FLAT.pop(key, None)

    _FLAT[key] = (weakref.ref(record, forget), flat)
    while len(_FLAT) > FLAT_KEPT:
        del _FLAT[next(iter(_FLAT))]  # the least recently asked for
    return flat


def flatten_record(record: Record) -> dict[str, Any]:
    """The record as dotted name -> JSON value (lists stay whole), without ``IGNORED_FIELDS`` (a new dict each call)."""
    return _flattened(record)


def environment_diff(a: Record, b: Record) -> list[FieldDiff]:
    """Every field whose value differs between ``a`` and ``b`` (a field only one states has ``None`` on the other).

    Context fields come first, then info fields; each group sorted by name.
    """
    fa, fb = _flat(a), _flat(b)
    rows = [
        FieldDiff(k, fa.get(k), fb.get(k), role_of(k), a.is_claimed(k) and k in fa, b.is_claimed(k) and k in fb)
        for k in sorted(fa.keys() | fb.keys())
        if fa.get(k) != fb.get(k)
    ]
    return sorted(rows, key=lambda r: (r.role != "context", r.field))
