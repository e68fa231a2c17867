"""Records as the site holds them at 10,000 records: lean in memory, whole on demand.

Profiled at 1,000 synthetic records, a loaded record took about 0.6 MB: its per-request samples (thousands of
numbers), its JSON text, and pydantic's bookkeeping (a set of the fields given, per model: a thousand models per
record) with the same short strings (units, formulas) repeated in every one. Only the frame's rows (computed when a
record is loaded), comparisons and the charts of repeated runs read the samples, and only a record's JSON download
reads its text. So the site keeps each record *lean* (:func:`lean`): every level's samples replaced by
:class:`UnloadedSamples`, which know their length (a page says how many samples a level kept) and refuse to be
read, the fields-given sets and short strings shared; and a :class:`SiteRecord` reads its ``raw`` text and its
whole record (:meth:`SiteRecord.whole`) back when asked (from the site cache, else from the record file).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel

from bench.record.load import LoadedRecord
from bench.record.model import Record, Samples

__all__ = [
    "SamplesNotLoaded",
    "SharedValues",
    "SiteRecord",
    "UnloadedSamples",
    "fields_given_key",
    "json_key",
    "lean",
    "whole_record",
]


class SharedValues(dict[Any, Any]):
    """One table per site of the values every record shares (:func:`share`): a short string is its own key, a model's
    fields-given set is kept under :func:`fields_given_key`. A key not in the table yet is added as it comes
    (``__missing__``), so ``table[key]`` alone shares a value: the site cache's unpickler calls it at C speed for
    each string of a record (``table.__getitem__`` as its ``persistent_load``), where a Python method per string cost
    2.4x the time of the whole unpickling (300 lean records: 1.88 s against 0.77 s)."""

    def __missing__(self, key: Any) -> Any:
        value = key
        if type(key) is tuple and key[0] == "json":
            value = json.loads(key[1])
            share(value, self)  # its strings are the site's too
        elif type(key) is tuple:
            value = set(key[1])
        self[key] = value
        return value


def fields_given_key(fields: set[str] | frozenset[str]) -> tuple[str, tuple[str, ...]]:
    """Where :class:`SharedValues` keeps a fields-given set equal to ``fields``."""
    return ("fields-given", tuple(sorted(fields)))


def json_key(text: str) -> tuple[str, str]:
    """Where :class:`SharedValues` keeps the value of the JSON ``text`` (a model's dict field, e.g. the payload a
    server reported about itself, which the runs of one configuration repeat): one object for every equal value, so
    it must not be changed once read."""
    return ("json", text)


class SamplesNotLoaded(RuntimeError):
    """A lean record's samples were read: ask the site for the whole record (``SiteData.whole``)."""


class UnloadedSamples(list[Any]):
    """Where a lean record's samples were: their number, and an error for anything that reads them.

    A list (empty inside) so that pydantic's serializer takes it: a lean record dumps its samples as ``[]`` (the
    environment diff dumps whole records and ignores their levels); Python code that reads them is refused."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    def _refuse(self, *_: object) -> NoReturn:
        raise SamplesNotLoaded(f"the {self.n} samples of a lean record are not in memory: use SiteData.whole()")

    __getitem__ = __iter__ = __reversed__ = __contains__ = _refuse
    index = count = copy = _refuse

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None

    def __repr__(self) -> str:
        return f"UnloadedSamples({self.n})"

    def __reduce__(self) -> tuple[type[UnloadedSamples], tuple[int]]:
        return UnloadedSamples, (self.n,)


def _unloaded(s: Samples) -> Samples:
    return s.model_copy(update={name: UnloadedSamples(len(getattr(s, name))) for name in Samples.model_fields})


def lean(record: Record, shared: SharedValues | None = None) -> tuple[Record, tuple[Samples | None, ...]]:
    """The record without its samples' values, and the samples of each level (None where it kept none).

    ``shared``: one table per site, in which equal fields-given sets and short strings of every record become one
    object (the models are frozen, so nothing changes them afterwards)."""
    samples = tuple(lv.samples for lv in record.levels)
    levels = [
        lv if lv.samples is None else lv.model_copy(update={"samples": _unloaded(lv.samples)}) for lv in record.levels
    ]
    out = record.model_copy(update={"levels": levels})
    share(out, SharedValues() if shared is None else shared)
    return out, samples


def whole_record(lean_record: Record, samples: Sequence[Samples | None]) -> Record:
    """The lean record with its levels' samples put back."""
    if len(samples) != len(lean_record.levels):
        raise ValueError(f"{len(samples)} samples for {len(lean_record.levels)} levels")
    pairs = zip(lean_record.levels, samples, strict=True)
    levels = [lv if s is None else lv.model_copy(update={"samples": s}) for lv, s in pairs]
    return lean_record.model_copy(update={"levels": levels})


def share(value: Any, table: SharedValues) -> None:
    """Make equal fields-given sets and strings inside a (frozen) model tree one object each."""
    if isinstance(value, BaseModel):
        fields = value.__pydantic_fields_set__
        object.__setattr__(value, "__pydantic_fields_set__", table.setdefault(fields_given_key(fields), fields))
        attrs = value.__dict__
        for k, v in attrs.items():
            if type(v) is str:
                attrs[k] = table.setdefault(v, v)
            elif v is not None and not isinstance(v, int | float):
                share(v, table)
    elif type(value) is list:  # not UnloadedSamples: nothing inside to share
        for i, v in enumerate(value):
            if type(v) is str:
                value[i] = table.setdefault(v, v)
            elif v is not None and not isinstance(v, int | float):
                share(v, table)
    elif isinstance(value, dict):
        for k, v in value.items():
            if type(v) is str:
                value[k] = table.setdefault(v, v)
            elif isinstance(v, BaseModel | dict) or type(v) is list:
                share(v, table)


class SiteRecord(LoadedRecord):
    """A record of the site: ``record`` lean (:func:`lean`), ``raw`` (the JSON the site offers for download, read by
    ``raw`` when asked: it needs no samples) and the whole record read back by ``restore`` when asked."""

    def __init__(
        self,
        record: Record,
        path: Path,
        restore: Callable[[], LoadedRecord],
        digest: str,
        raw: Callable[[], str],
        fingerprint: str | None = None,
    ) -> None:
        object.__setattr__(self, "record", record)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "_restore", restore)
        object.__setattr__(self, "_raw", raw)
        # the sha256 of the file's path and bytes as the build read them (the cache's key of the record): with the
        # code version (the cache folder's name) it decides everything the site shows of the record
        object.__setattr__(self, "digest", digest)
        # its context fingerprint (bench.compare.fingerprint) as the record's cache entry holds it (None: not known)
        object.__setattr__(self, "fingerprint", fingerprint)

    def __getattr__(self, name: str) -> Any:
        if name == "raw":  # not held: read back for the one download that needs it
            read: Callable[[], str] = object.__getattribute__(self, "_raw")
            return read()
        raise AttributeError(name)

    def whole(self) -> LoadedRecord:
        """The record with its samples, and its raw JSON text."""
        restore: Callable[[], LoadedRecord] = object.__getattribute__(self, "_restore")
        return restore()

    def __repr__(self) -> str:
        return f"SiteRecord(id={self.record.id!r}, path={str(self.path)!r})"
