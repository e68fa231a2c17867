"""Reading records from disk: parse, migrate, validate, and check the folder layout."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.errors import from_validation_error, read_text_file

from ._migrate import migrate
from .errors import RecordError
from .model import Record

__all__ = [
    "MAX_JSON_DEPTH",
    "TOO_DEEP",
    "JsonTooDeep",
    "LoadResult",
    "LoadedRecord",
    "iter_records",
    "load_record",
    "load_records",
    "loads_bounded",
    "loads_json",
    "nests_too_deep",
    "non_finite_field",
    "parse_record",
]


@dataclass(frozen=True)
class LoadedRecord:
    record: Record
    path: Path
    raw: str


@dataclass
class LoadResult:
    records: list[LoadedRecord] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)

    @property
    def by_id(self) -> dict[str, LoadedRecord]:
        return {r.record.id: r for r in self.records}


class _NonFinite:
    """Stands for a ``NaN``/``Infinity`` literal while the JSON is parsed, so its field can be named."""

    def __init__(self, text: str) -> None:
        self.text = text


class _HugeInt(_NonFinite):
    """Stands for an integer literal too long to convert (Python refuses more than 4,300 digits)."""


_MAX_DIGITS = 4000

# How deep a JSON file may nest (a record nests 8 deep, another tool's result 9). Python's own limit differs by
# version (json.loads refuses 1,200 levels on 3.11.7, reads them and refuses 5,000 on 3.12.1, reads 5,000 on 3.13.0),
# and the walks over a parsed value recurse, so the rule is this number, the same on each.
MAX_JSON_DEPTH = 100
_CONTAINERS = frozenset({dict, list})
TOO_DEEP = f"JSON nested at most {MAX_JSON_DEPTH} deep (this file nests deeper)"


class JsonTooDeep(ValueError):
    """JSON nested deeper than ``MAX_JSON_DEPTH`` (its message is :data:`TOO_DEEP`)."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP)


def loads_bounded(text: str, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)`` under the depth rule, alike on every Python: raises :class:`JsonTooDeep` where
    the parser gives up (a RecursionError) or the value nests past ``MAX_JSON_DEPTH``."""
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise JsonTooDeep from None
    if nests_too_deep(data):
        raise JsonTooDeep
    return data


def nests_too_deep(data: Any) -> bool:
    """Whether parsed JSON holds containers more than ``MAX_JSON_DEPTH`` deep: a walk level by level, with no
    recursion, that skips in C a container holding no container (a record's samples)."""
    level = [data] if type(data) in _CONTAINERS else []
    for _ in range(MAX_JSON_DEPTH):
        deeper: list[Any] = []
        for c in level:
            values = c.values() if type(c) is dict else c
            if not _CONTAINERS.isdisjoint(map(type, values)):
                deeper += [v for v in values if type(v) in _CONTAINERS]
        if not deeper:
            return False
        level = deeper
    return True


def _parse_int(text: str) -> int | _HugeInt:
    if len(text) > _MAX_DIGITS:
        return _HugeInt(f"an integer of {len(text.lstrip('-')):,} digits")
    return int(text)


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: JSON readers keep one of two equal keys silently, so a file
    could show a reviewer one value and give the site another. (Built in C; only an object that lost a key is
    walked, to name the first key given twice.)"""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


# What the text of a JSON number that is not finite once parsed, or too long to read, must hold. A float becomes
# infinite only past about 1.8e308: with an exponent of three digits or more, or 155 digits or more before its point
# (a two-digit exponent and fewer digits stay below 1e253); an integer too long to read has more than _MAX_DIGITS
# digits. A number starts a JSON value: after ``:``, ``,``, ``[``, white space or at the start of the text. The text
# is looked at as bytes with every digit made ``0``, ``e``/``E`` ``e``, a sign ``+``, ``.`` kept, another letter
# (or a byte of a non-ASCII character) ``x`` and anything else a space: a run of 155 ``0`` or a ``0e000``/``0e+000``
# whose digits start after a space is a suspect (a string may hold one too: the careful parse then runs).
def _shape_of(byte: int) -> int:
    c = chr(byte)
    if c in "0123456789":
        return ord("0")
    if c in "eE":
        return ord("e")
    if c in "+-":
        return ord("+")
    if c == ".":
        return byte
    return ord("x") if byte >= 128 or c.isalpha() else ord(" ")


_SHAPES = bytes(_shape_of(b) for b in range(256))
_LONG_RUN = b"0" * 155
_MANTISSA = frozenset(b"0.")


def _suspect_number(raw: str) -> bool:
    """True when ``raw`` may hold a number that parses to an infinity or is too long to read (see above); False
    only when it holds none."""
    shapes = raw.encode("utf-8", "surrogatepass").translate(_SHAPES)
    if _LONG_RUN in shapes:
        return True
    for exponent in (b"e000", b"e+000"):
        at = shapes.find(exponent)
        while at >= 0:
            i = at - 1
            if i >= 0 and shapes[i] == 0x30:  # a digit before the e: walk back over the mantissa
                while i >= 0 and shapes[i] in _MANTISSA:
                    i -= 1
                if i >= 0 and shapes[i] == 0x2B:  # its sign
                    i -= 1
                if i < 0 or shapes[i] == 0x20:
                    return True
            at = shapes.find(exponent, at + 1)
    return False


def _all_finite_numbers(values: list[Any]) -> bool:
    """True when every item is a finite number (or a bool): their exact sum is then finite. A NaN or an infinity
    makes the sum non-finite (or fsum refuses ``inf + -inf`` with a ValueError), anything else (a string, None, an
    object standing for a literal) is a TypeError, an integer too large for a float (or a sum past the largest
    float) an OverflowError; those lists are walked item by item."""
    try:
        return math.isfinite(math.fsum(values))
    except (TypeError, OverflowError, ValueError):
        return False


def non_finite_field(data: Any, prefix: str = "") -> tuple[str, str] | None:
    """The dotted path and literal of the first non-finite number in ``data`` (parsed JSON), or None."""
    if isinstance(data, _NonFinite):
        return prefix, data.text
    if isinstance(data, float) and not math.isfinite(data):
        return prefix, repr(data)
    if isinstance(data, dict):
        for k, v in data.items():
            found = non_finite_field(v, f"{prefix}.{k}" if prefix else str(k))
            if found is not None:
                return found
    elif isinstance(data, list):
        if _all_finite_numbers(data):  # a record's samples: thousands of numbers, summed in C instead of walked
            return None
        for i, v in enumerate(data):
            found = non_finite_field(v, f"{prefix}[{i}]")
            if found is not None:
                return found
    return None


def loads_json(
    raw: str, path: Path | str, *, line: int = 1, where: str = "", infinite_ok: frozenset[str] = frozenset()
) -> Any:
    """Parse JSON text (a record, or another tool's result); NaN and Infinity (which JSON does not allow, but Python
    writes), integers too long to read and a key given twice in one object are refused with the field they stand in.

    ``line``: the file line the text starts on (one line of a JSON Lines file); ``where`` prefixes every field named
    (``"line 3: "``); ``infinite_ok``: top-level keys where a bare ``Infinity`` is a setting, not a figure (a
    benchmark client's ``request_rate``: all requests at once), read as ``math.inf``."""
    constants: list[str] = []

    def constant(text: str) -> _NonFinite:
        constants.append(text)
        return _NonFinite(text)

    careful = _suspect_number(raw)
    hooks: dict[str, Any] = {"parse_int": _parse_int} if careful else {}
    try:
        data = loads_bounded(raw, parse_constant=constant, object_pairs_hook=_unique_object, **hooks)
    except json.JSONDecodeError as exc:
        raise RecordError(path, f"line {exc.lineno + line - 1} column {exc.colno}", f"valid JSON ({exc.msg})") from None
    except JsonTooDeep:
        raise RecordError(path, where, TOO_DEEP) from None
    except _DuplicateKey as exc:
        raise RecordError(path, f"{where}{exc.key}", "each key once per object (this file gives it twice)") from None
    settings: set[str] = set()
    if infinite_ok and isinstance(data, dict):
        settings = {
            k for k in infinite_ok & data.keys() if isinstance(data[k], _NonFinite) and data[k].text == "Infinity"
        }
    found = None
    if careful or constants:  # else nothing in ``data`` can be non-finite or too long: no walk over every value
        found = non_finite_field({k: v for k, v in data.items() if k not in settings} if settings else data)
    if found is not None:
        if found[1].startswith("an integer of "):
            raise RecordError(
                path, f"{where}{found[0]}", f"a number of at most {_MAX_DIGITS:,} digits (got {found[1]})"
            )
        raise RecordError(path, f"{where}{found[0]}", f"a finite number (got {found[1]}: JSON has no NaN or Infinity)")
    for key in settings:
        data[key] = math.inf
    return data


def parse_record(data: Any, path: Path | str) -> Record:
    """Migrate and validate one record's JSON value; raise RecordError naming the first bad field."""
    if not isinstance(data, dict):
        raise RecordError(path, "", f"a JSON object, got {type(data).__name__}")
    found = non_finite_field(data)
    if found is not None:
        raise RecordError(path, found[0], f"a finite number (got {found[1]}: JSON has no NaN or Infinity)")
    return _migrated_and_validated(data, path)


def _migrated_and_validated(data: dict[str, Any], path: Path | str) -> Record:
    data = migrate(data, path)
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(RecordError, path, exc) from None


def load_record(path: Path, *, check_layout: bool = True, raw: str | None = None) -> LoadedRecord:
    """Read, migrate and validate the record at ``path`` (``raw``: its text, when the caller read it already)."""
    if raw is None:
        raw = read_text_file(path, RecordError)
    data = loads_json(raw, path)  # refuses NaN and Infinity already: no second walk over every value
    if not isinstance(data, dict):
        raise RecordError(path, "", f"a JSON object, got {type(data).__name__}")
    record = _migrated_and_validated(data, path)
    if check_layout:
        if path.stem != record.id:
            raise RecordError(path, "id", f"the file name without .json ({path.stem!r}), got {record.id!r}")
        if path.parent.name != record.experiment:
            raise RecordError(
                path, "experiment", f"the name of the record's folder ({path.parent.name!r}), got {record.experiment!r}"
            )
    return LoadedRecord(record=record, path=path, raw=raw)


def iter_records(
    root: Path, *, load: Callable[[Path], LoadedRecord] = load_record
) -> Iterator[LoadedRecord | RecordError]:
    """Each ``root/<experiment>/*.json`` in path order, loaded with ``load``, or the error it gives (a file out of
    the layout, a bad record, an id used by an earlier file). Only the ids seen are held: ``bench validate`` of
    10,000 records held every record and its text (a peak of 4.75 GiB) before it printed a line."""
    if not root.is_dir():
        return
    seen: dict[str, Path] = {}
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if len(rel.parts) != 2:
            yield RecordError(path, "", "a record at records/<experiment>/<id>.json")
            continue
        try:
            loaded = load(path)
        except RecordError as exc:
            yield exc
            continue
        rid = loaded.record.id
        if rid in seen:
            yield RecordError(path, "id", f"a unique id; {rid!r} is also used by {seen[rid]}")
            continue
        seen[rid] = path
        yield loaded


def load_records(root: Path, *, load: Callable[[Path], LoadedRecord] = load_record) -> LoadResult:
    """Load every ``root/<experiment>/*.json`` with ``load`` (a cache may pass its own): :func:`iter_records`, the
    records sorted by time. Bad files become errors; good ones still load."""
    result = LoadResult()
    for found in iter_records(root, load=load):
        if isinstance(found, RecordError):
            result.errors.append(found)
        else:
            result.records.append(found)
    result.records.sort(key=lambda r: (r.record.created_at, r.record.id))
    return result
