"""Loading the site's records: each one read, validated and redacted once, its rows of the frame computed while its
samples are in memory, then kept lean (:mod:`bench.site._lean`) with a way back to the whole record.

With a site cache (:mod:`bench.site._cache`), a record file whose path and bytes are unchanged is not read as JSON
at all: its entry holds what was validated (the lean record and its samples, pickled apart so that a build restores
the samples only of the records it compares), the redacted JSON text where redaction changed it, and per confidence
level its rows and their text in the CSV and JSON downloads (:class:`RecordText`), so that a build writes the
downloads of unchanged records without formatting a cell. Without one, the whole record is read from its file again
when asked. The record's raw JSON download never needs its samples: it is the redacted text where redaction changed
the file, else the file's own text (checked unchanged since the build read it).
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import pickle
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from bench.compare import fingerprint
from bench.dataframe import COLUMNS, INTERVAL_BATCH, frame_rows, frame_rows_each
from bench.errors import read_text_file
from bench.frame_text import CSV_HEADER, csv_fraction, csv_lines, json_lines
from bench.record.errors import RecordError
from bench.record.load import LoadedRecord, LoadResult, load_record, load_records
from bench.record.model import Record

from ._between_builds import Carried
from ._cache import SiteCache, record_key
from ._file_keys import FileKeys
from ._lean import SharedValues, SiteRecord, fields_given_key, json_key, lean, whole_record
from ._outputs import Offered, Outputs
from ._workers import in_workers

__all__ = [
    "RecordText",
    "Rows",
    "SiteRecords",
    "compact_rows",
    "load_site_records",
    "raw_download_key",
    "record_text",
    "rows_download_key",
    "squeeze",
    "unsqueeze",
]

KIND = "record"
WHOLE_KIND = "record-whole"
OFFERED = "offered"  # in a KIND entry a worker wrote: the record's downloads it kept (_kept_downloads)
Shown = Callable[[LoadedRecord], LoadedRecord]


@dataclass
class SiteRecords:
    """What :func:`load_site_records` read: the walk's result (its records lean :class:`SiteRecord`) and each
    record's rows of the frame by id."""

    result: LoadResult
    rows: dict[str, Rows] = field(default_factory=dict)
    texts: dict[str, RecordText] = field(default_factory=dict)


Rows = tuple[tuple[Any, ...], ...]
"""A record's rows of the frame, each the cells of ``bench.dataframe.COLUMNS`` in order: a tenth of the memory of
as many dicts."""


class RecordText(NamedTuple):
    """A record's rows as text in the downloads: its part of every CSV (``bench.dataframe.csv_lines``, written with
    its own ``fraction`` of the time columns: ``csv_fraction``) and of every JSON list (``json_lines``).

    Held compressed (:func:`squeeze`): a synthetic record's two parts are about 43 kB of text and 9 kB so, which is
    400 MB against 90 MB at 10,000 records; reading one back costs about 0.2 ms."""

    csv_z: bytes
    fraction: tuple[int, ...]  # digits of the time columns' seconds' fraction (csv_fraction)
    json_z: bytes

    @property
    def csv(self) -> str:
        return unsqueeze(self.csv_z)

    @property
    def json(self) -> str:
        return unsqueeze(self.json_z)


def squeeze(text: str) -> bytes:
    """``text`` as a :class:`RecordText` holds it (zlib, level 1: a quarter of level 6's time, 1.3x its size)."""
    return zlib.compress(text.encode("utf-8"), 1)


def unsqueeze(data: bytes) -> str:
    """The text :func:`squeeze` kept."""
    return zlib.decompress(data).decode("utf-8")


def record_text(rows: Rows) -> RecordText:
    return RecordText(squeeze(csv_lines(rows)), csv_fraction(rows), squeeze(json_lines(rows)))


def compact_rows(rows: list[dict[str, Any]], shared: SharedValues) -> Rows:
    """Rows as tuples, their strings shared with every other record's (experiment, variant, engine, ...)."""
    return tuple(tuple(shared[v] if type(v) is str else v for v in (row.get(c) for c in COLUMNS)) for row in rows)


def raw_download_key(digest: str) -> str:
    """What names a record's raw JSON download among the site's outputs (``Outputs.recall``): the record's file (its
    cache digest, ``record_key``)."""
    return f"raw\0{digest}"


def rows_download_key(kind: str, confidence: str, digests: Sequence[str]) -> str:
    """What names a download of these records' rows (``kind`` ``csv`` or ``json``) at ``confidence`` (its repr)
    among the site's outputs: the records' files (their cache digests, in the download's order)."""
    return hashlib.sha256("\0".join([kind, confidence, *digests]).encode("ascii")).hexdigest()


def _kept_downloads(outputs: Outputs, digest: str, confidence: str, raw: str, text: RecordText) -> dict[str, Offered]:
    """Keep the record's own two downloads (its JSON as the site offers it, redacted; its rows as CSV: the header and
    its lines, written with its own fraction as a one-record file is) where the build's generator finds them under
    the keys it gives them (:func:`raw_download_key`, :func:`rows_download_key`): made by the process that read the
    record, not one by one by the generator after every record is read. A download that cannot be kept is left to
    the generator."""
    made: dict[str, Offered] = {}
    downloads = {raw_download_key(digest): raw, rows_download_key("csv", confidence, [digest]): CSV_HEADER + text.csv}
    for inputs, data in downloads.items():
        try:
            made[inputs] = outputs.keep_offered(data.encode("utf-8"))
        except OSError:
            continue
    return made


def _new_entry(
    path: Path, text_read: str, shown: Shown, confidence: float, shared: SharedValues
) -> tuple[dict[str, Any], dict[str, Any], Record, Rows, RecordText]:
    """A record read, validated, redacted and lean, with its rows and their text: its two cache entries (what every
    build reads, what only a comparison or a download of the record reads: :func:`_put`) and those."""
    whole = shown(load_record(path, raw=text_read))
    return _entry(whole, text_read, frame_rows([whole.record], confidence=confidence), confidence, shared)


def _entry(
    whole: LoadedRecord, text_read: str, rows: list[dict[str, Any]], confidence: float, shared: SharedValues
) -> tuple[dict[str, Any], dict[str, Any], Record, Rows, RecordText]:
    """:func:`_new_entry` of a record already read and redacted (``whole``), whose rows are ``rows``."""
    conf = repr(confidence)
    mine = compact_rows(rows, shared)
    text = record_text(mine)
    slim, samples = lean(whole.record, shared)
    raw = whole.raw if whole.raw != text_read else None
    entry = {
        "lean": _dumps(slim),
        "raw_changed": raw is not None,
        "rows": {conf: _dumps(mine)},
        "text": {conf: tuple(text)},
        "fingerprint": fingerprint(whole.record),
    }
    return entry, {"samples": pickle.dumps(samples, protocol=5), "raw": raw}, slim, mine, text


def _put(cache: SiteCache, key: str, entry: dict[str, Any], whole: dict[str, Any] | None) -> None:
    """Keep a record's entries: what every build reads compressed under :data:`KIND` (about 27 kB at 1,000
    synthetic records, where the whole entry was 125 kB: on a machine that keeps little of the cache in memory, a
    warm build at 10,000 records spent 62 s of 161 reading entries), and its samples and redacted text apart under
    :data:`WHOLE_KIND` (read only when a build needs the whole record or its redacted JSON)."""
    cache.put_pickled(KIND, key, entry, compressed=True)
    if whole is not None:
        cache.put_pickled(WHOLE_KIND, key, whole)


def _put_many(cache: SiteCache, made: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """:func:`_put` of a batch of records (key -> entry and whole entry), one pack of each kind
    (``SiteCache.put_pickled_many``): two files for the batch instead of two per record."""
    cache.put_pickled_many(KIND, {key: entry for key, (entry, _) in made.items()}, compressed=True)
    cache.put_pickled_many(WHOLE_KIND, {key: whole for key, (_, whole) in made.items()})


MIN_PARALLEL = 16  # fewer records to read than this: not worth a fork


class _Read(NamedTuple):
    """What the site holds of a record's cache entry (:func:`_read_entry`)."""

    record: Record
    rows: Rows | None  # None: the entry holds no rows at the build's confidence level
    text: RecordText | None
    raw_changed: bool
    fingerprint: str


def _read_entry(entry: dict[str, Any], conf: str, shared: SharedValues) -> _Read:
    """What the site holds of a record's cache entry: the lean record, its rows and their text at ``conf``."""
    slim = _loads(entry["lean"], shared)
    mine = _loads(entry["rows"][conf], shared) if conf in entry["rows"] else None
    text = RecordText(*entry["text"][conf]) if mine is not None and conf in entry["text"] else None
    return _Read(slim, mine, text, entry["raw_changed"], entry["fingerprint"])


def _fill_cache(
    root: Path,
    shown: Shown,
    confidence: float,
    cache: SiteCache,
    workers: int,
    keys: FileKeys,
    shared: SharedValues,
) -> dict[str, _Read]:
    """Read the records the cache lacks in ``workers`` processes (``in_workers``), into the cache, where the loading
    pass finds them (a record a child could not read, a bad one above all, is read there again and reported). Their
    entries as this process read them back (by key) while the children still worked (``in_workers``'s ``done``):
    read back after the children had ended, 10,000 records' entries took 16 s of this process alone. The children
    also keep each record's own downloads (:func:`_kept_downloads`), which this process offers to its outputs as it
    reads the entries back."""
    missing: list[Path] = []  # not their text: 1 GB at 10,000 records, read again by the process that reads each
    key_of_path: dict[Path, str] = {}
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if len(rel.parts) != 2:
            continue
        try:
            key = keys.key(path, rel.as_posix())[0]
        except RecordError:
            continue
        if not cache.has_pickled(KIND, key):
            missing.append(path)
            key_of_path[path] = key
    early: dict[str, _Read] = {}
    if len(missing) < MIN_PARALLEL:
        return early
    conf = repr(confidence)
    outputs = cache.outputs  # made here: the children keep files where this process's outputs look

    def read_back(chunk: Sequence[Path]) -> None:
        for path in chunk:
            key = key_of_path[path]
            entry = cache.peek(KIND, key, compressed=True)
            if entry is None:  # a record that could not be read: the loading pass reports it (a miss)
                continue
            for inputs, offered in entry.get(OFFERED, {}).items():  # the record's downloads, kept by the child
                outputs.offer(inputs, offered)
            found = _read_entry(entry, conf, shared)  # not the entry itself: its pickles are 100 MB at 1,000 records
            if found.rows is not None and found.text is not None:  # else completed by the loading pass
                cache.hits += 1  # a hit, as the loading pass would have counted it
                early[key] = found

    def read(share: Sequence[Path]) -> None:
        shared = SharedValues()
        for start in range(0, len(share), INTERVAL_BATCH):  # their rows' intervals bootstrapped together
            ready: list[tuple[Path, str, LoadedRecord]] = []
            for path in share[start : start + INTERVAL_BATCH]:
                try:
                    text_read = read_text_file(path, RecordError)
                    ready.append((path, text_read, shown(load_record(path, raw=text_read))))
                except RecordError:
                    continue
            rows = frame_rows_each([whole.record for _, _, whole in ready], confidence=confidence)
            made: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
            for (path, text_read, whole), mine in zip(ready, rows, strict=True):
                entry, kept, _, _, text = _entry(whole, text_read, mine, confidence, shared)
                key = key_of(path, text_read)
                # for this build's read_back alone (a later build's outputs recall them by the last build's notes)
                entry[OFFERED] = _kept_downloads(outputs, key, conf, whole.raw, text)
                made[key] = (entry, kept)
            _put_many(cache, made)

    def key_of(path: Path, text_read: str) -> str:
        return record_key(path.relative_to(root).as_posix(), text_read)

    # a chunk of the queue is one batch of records whose rows' intervals are bootstrapped together
    # this process only reads back the children's entries, as they end each chunk: at 10,000 records, doing chunks of
    # its own besides left it about 100 MiB larger (what each chunk made and freed, among what it kept)
    in_workers(missing, read, workers, child_setup=lambda: None, chunk=INTERVAL_BATCH, done=read_back, listen=True)
    return early


def load_site_records(
    root: Path, shown: Shown, confidence: float, cache: SiteCache | None, *, workers: int = 1
) -> SiteRecords:
    """Every record under ``root`` (``bench.record.load.load_records``: the walk, the layout and duplicate-id
    checks) as ``shown`` makes it (the site's redaction; a ``RecordError`` it raises is that file's error), lean,
    with its rows of the frame at ``confidence``. With a cache and ``workers`` > 1, the records it lacks are read
    in that many processes first."""
    shared = SharedValues()
    rows: dict[str, Rows] = {}
    texts: dict[str, RecordText] = {}
    conf = repr(confidence)

    _KEPT.turn()
    keys = FileKeys.of(cache)  # a file unchanged since the last build is keyed without being read

    def load(path: Path) -> LoadedRecord:
        rel = path.relative_to(root).as_posix()
        key, text_read = keys.key(path, rel)
        found = _KEPT.get((key, conf))
        if found is not None and found.shown is shown:  # loaded by the last build of this process: the same objects
            slim, mine_kept, text_kept, changed, fp, _ = found
            restore = partial(_restore, slim, path, rel, key, shown, cache)
            rows[slim.id], texts[slim.id] = mine_kept, text_kept
            raw_text = partial(_raw_text, path, rel, key, restore if changed else None, cache)
            return SiteRecord(slim, path, restore, key, raw_text, fp)
        found_early = early.pop(key, None)  # read back while the records the cache lacked were read
        if found_early is not None:
            slim, mine_early, text_early, changed, fp = found_early
            assert mine_early is not None and text_early is not None  # read_back keeps no other
            return _site_record(slim, mine_early, text_early, changed, fp, path, rel, key)
        entry = cache.get_pickled(KIND, key, compressed=True) if cache is not None else None
        mine: Rows | None
        text: RecordText | None = None
        if entry is None:
            if text_read is None:  # keyed unread, but the cache lost its entry
                text_read = read_text_file(path, RecordError)
                key = record_key(rel, text_read)
            entry, whole, slim, mine, text = _new_entry(path, text_read, shown, confidence, shared)
            if cache is not None:
                _put(cache, key, entry, whole)
        else:
            slim, mine, text = _read_entry(entry, conf, shared)[:3]
        changed, fp = entry["raw_changed"], entry["fingerprint"]
        if mine is None or text is None:  # another confidence level than the entry's: the rows once more
            if mine is None:
                restored = _restore(slim, path, rel, key, shown, cache).record
                mine = compact_rows(frame_rows([restored], confidence=confidence), shared)
            text = record_text(mine)
            entry["rows"][conf] = _dumps(mine)
            entry["text"][conf] = tuple(text)
            if cache is not None:
                _put(cache, key, entry, None)
        return _site_record(slim, mine, text, changed, fp, path, rel, key)

    def _site_record(
        slim: Record, mine: Rows, text: RecordText, changed: bool, fp: str, path: Path, rel: str, key: str
    ) -> SiteRecord:
        restore = partial(_restore, slim, path, rel, key, shown, cache)
        raw = partial(_raw_text, path, rel, key, restore if changed else None, cache)
        rows[slim.id] = mine
        texts[slim.id] = text
        _KEPT.put((key, conf), _Kept(slim, mine, text, changed, fp, shown))
        return SiteRecord(slim, path, restore, key, raw, fp)

    early: dict[str, _Read] = {}
    enabled = gc.isenabled()
    gc.disable()  # millions of objects made and none freed: full collections would walk them again and again
    try:
        if cache is not None and workers > 1:
            early = _fill_cache(root, shown, confidence, cache, workers, keys, shared)
        loaded = SiteRecords(load_records(root, load=load), rows, texts)
        keys.finish(cache)
    finally:
        if enabled:
            gc.enable()
    return loaded


class _Kept(NamedTuple):
    record: Record
    rows: Rows
    text: RecordText
    raw_changed: bool  # redaction changed the file's text
    fingerprint: str
    shown: Shown  # how the record was redacted


# The records the last build of this process loaded, by file key and confidence (carried under ``mkdocs serve``)
_KEPT: Carried[tuple[str, str], _Kept] = Carried()


class _SharingPickler(pickle.Pickler):
    """Pickles the fields-given sets of models and the strings by value, as references the unpickler resolves to
    one object per value for the whole site (what :func:`bench.site._lean.share` does, at C speed on reading:
    :func:`_loads`)."""

    def persistent_id(self, obj: Any) -> Any:
        t = type(obj)
        if t is str:
            return obj
        if t is set:  # a model's fields-given set: a record holds no other set (it is read from JSON)
            return fields_given_key(obj)
        if t is _Json:
            return json_key(str(obj))
        return None

    def reducer_override(self, obj: Any) -> Any:
        """A model as its class, its field names (one tuple per class and shape) and values: read back by
        :func:`_model`, whose instances keep their fields as the interpreter keeps a class's attributes, in a table
        of values under keys shared by every instance of the class. Pydantic's own state (``__dict__`` assigned
        whole) gives each instance a dict of its own, about 400 bytes a model at about 190 models a record: most of a
        lean record's 118 kB at 1,000 synthetic records (62 kB read back this way). A dict field goes as
        :func:`_as_json` makes it."""
        if not isinstance(obj, BaseModel):
            return NotImplemented
        attrs = obj.__dict__
        names = tuple(attrs)
        names = _NAMES.setdefault(names, names)  # the same object for every model of the shape: pickled once
        values = tuple(_as_json(v) if type(v) is dict and v else v for v in attrs.values())
        state = (type(obj), names, values, obj.__pydantic_fields_set__)
        return _model, (*state, obj.__pydantic_extra__, obj.__pydantic_private__)


class _Json(str):
    """A model's dict field as JSON text: pickled as a reference to one value per text for the whole site
    (:func:`bench.site._lean.json_key`)."""


def _as_json(value: dict[str, Any]) -> Any:
    """``value`` as :class:`_Json` when JSON gives it back equal (a record's dicts are read from JSON), else as is."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return value
    return _Json(text) if json.loads(text) == value else value


_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
_set = object.__setattr__


def _keys_shared() -> bool:
    """Whether attributes set one by one on new instances of a class laid out as pydantic's models are (a subclass
    of a class whose ``__slots__`` are ``BaseModel``'s: ``__dict__`` and three more) land in dicts whose keys the
    class shares. 3.11 and 3.12 share them: 176 bytes for 8 attributes against 272 for a dict of their own, as
    ``sys.getsizeof`` counts them at 16 instances. 3.13.0 does not, for a class with slots beside ``__dict__``:
    304 bytes, more than the whole dict."""

    class Base:
        __slots__ = BaseModel.__slots__

    class Probe(Base):
        pass

    names = [f"f{i}" for i in range(8)]
    probes = [Probe() for _ in range(16)]
    for probe in probes:
        for name in names:
            _set(probe, name, None)
    return sys.getsizeof(probes[-1].__dict__) < sys.getsizeof(dict.fromkeys(names))


KEYS_SHARED = _keys_shared()


def _model(
    cls: type[BaseModel],
    names: tuple[str, ...],
    values: tuple[Any, ...],
    fields_set: set[str],
    extra: dict[str, Any] | None,
    private: dict[str, Any] | None,
) -> BaseModel:
    """A model pickled by :class:`_SharingPickler`. Where the interpreter shares keys (:data:`KEYS_SHARED`), its
    fields are set one by one on a new instance, in the order every instance of the class has them, so that the
    instances share one table of keys (a dict per instance took twice the memory); elsewhere they are its
    ``__dict__``, made whole at its size."""
    obj = cls.__new__(cls)
    if KEYS_SHARED:
        for name, value in zip(names, values, strict=True):
            _set(obj, name, value)
    else:
        _set(obj, "__dict__", dict(zip(names, values, strict=True)))
    _set(obj, "__pydantic_fields_set__", fields_set)
    _set(obj, "__pydantic_extra__", extra)
    _set(obj, "__pydantic_private__", private)
    return obj


def _dumps(value: Any) -> bytes:
    out = io.BytesIO()
    _SharingPickler(out, protocol=5).dump(value)
    return out.getvalue()


class _Unpickler(pickle.Unpickler):
    """An unpickler whose ``persistent_load`` may be set on the instance: Python 3.13 made that attribute of
    ``pickle.Unpickler`` itself read-only (a subclass's instance still takes it, and calls it from C)."""


def _loads(data: bytes, table: SharedValues) -> Any:
    unpickler = _Unpickler(io.BytesIO(data))
    # C all the way: a value not in the table yet is added (SharedValues.__missing__)
    unpickler.persistent_load = table.__getitem__  # type: ignore[method-assign]
    return unpickler.load()


def _restore(slim: Record, path: Path, rel: str, key: str, shown: Shown, cache: SiteCache | None) -> LoadedRecord:
    """The whole record (its samples back) and its redacted text: from the cache entry, else from the file (which
    must still hold the bytes the build read)."""
    entry = cache.peek(WHOLE_KIND, key) if cache is not None else None
    if entry is not None:
        record = whole_record(slim, pickle.loads(entry["samples"]))
        raw = entry["raw"]
        if raw is None:
            raw = _unchanged_text(path, rel, key)
        return LoadedRecord(record=record, path=path, raw=raw)
    whole = shown(load_record(path, raw=_unchanged_text(path, rel, key)))
    return LoadedRecord(record=whole.record, path=path, raw=whole.raw)


def _raw_text(
    path: Path, rel: str, key: str, redacted: Callable[[], LoadedRecord] | None, cache: SiteCache | None
) -> str:
    """The record's JSON as the site offers it for download, without its samples: the file's text (which must still
    be the bytes the build read); where redaction changed it (``redacted``: how to restore the record), the redacted
    text of the cache entry, else of the record restored from its file. The redacted text is not held in memory:
    at 10,000 records it would be most of their bytes."""
    if redacted is None:
        return _unchanged_text(path, rel, key)
    entry = cache.peek(WHOLE_KIND, key) if cache is not None else None
    if entry is not None and isinstance(entry.get("raw"), str):
        return str(entry["raw"])
    return redacted().raw


def _unchanged_text(path: Path, rel: str, key: str) -> str:
    text = read_text_file(path, RecordError)
    if record_key(rel, text) != key:
        raise RecordError(path, "", "the same file while the site is built (it changed during the build: build again)")
    return text
