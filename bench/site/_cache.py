"""What a site build can keep from the last one: per record, the loaded and redacted record and its rows of the frame;
per comparison, the bootstrap intervals of its ratios.

Profiled, the costliest per-record work of a build is reading a record (strict JSON, migration, validation,
redaction) and the bootstrap intervals of its rows (:func:`bench.dataframe.frame_rows`). Both depend on nothing but
the record file's bytes (and for the rows, the confidence level) and on benchbook's code, so they are kept in a
folder keyed by exactly that: the sha256 of the file's path in the records folder and its bytes, under a folder
named by :func:`code_version` (a hash of every source file of the ``bench`` package and the versions of the
libraries the numbers come from). Any change to a record, or to benchbook (a renderer, the bootstrap, the schema),
misses the cache; nothing else can hit it. Bad records are never cached: they are read, and reported, every time.
A comparison's intervals (and a chart's bands) depend on the records of its sides, the settings and the code: they
are kept under a hash of exactly those (the records' JSON text as the site shows it, the settings as JSON).

The folder is ``$BENCHBOOK_CACHE_DIR`` (``off`` turns the cache off) or ``~/.cache/benchbook/site``; entries are
JSON written atomically; a folder that cannot be written costs speed, never the build.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy
import pydantic

from bench.atomic_write import write_atomic
from bench.errors import read_text_file
from bench.record.errors import RecordError
from bench.record.load import LoadedRecord, LoadResult, load_record, load_records
from bench.record.model import Record

__all__ = ["CACHE_ENV", "SiteCache", "code_version", "default_cache_dir"]

CACHE_ENV = "BENCHBOOK_CACHE_DIR"
PACKAGE = Path(__file__).resolve().parents[1]  # bench/


def default_cache_dir() -> Path | None:
    """``$BENCHBOOK_CACHE_DIR`` (``off``: no cache), else ``~/.cache/benchbook/site``."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env.lower() == "off":
        return None
    return Path(env).expanduser() if env else Path.home() / ".cache" / "benchbook" / "site"


def code_version(package: Path | None = None) -> str:
    """A hash of every ``.py`` file under ``package`` (default: the running ``bench``, hashed once per process: its
    modules are loaded already) and of the numeric libraries' versions."""
    return _running_version() if package is None else _hash_sources(package)


@lru_cache(maxsize=1)
def _running_version() -> str:
    return _hash_sources(PACKAGE)


def _hash_sources(package: Path) -> str:
    h = hashlib.sha256(f"numpy {numpy.__version__} pydantic {pydantic.__version__}\n".encode())
    for path in sorted(package.resolve().rglob("*.py")):
        h.update(path.relative_to(package.resolve()).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@dataclass
class SiteCache:
    """The cache folder of one code version; ``hits``/``misses`` count what one build found."""

    root: Path
    version: str = field(default_factory=code_version)
    hits: int = 0  # records and rows
    misses: int = 0
    interval_hits: int = 0  # comparisons and chart bands found

    @property
    def folder(self) -> Path:
        return self.root / self.version[:24]

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key[:2] / f"{key}.json"

    def _get(self, kind: str, key: str, *, counted: bool = True) -> Any:
        try:
            value = json.loads(self._path(kind, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += counted
            return None
        self.hits += counted
        return value

    def _put(self, kind: str, key: str, value: Any) -> None:
        path = self._path(kind, key)
        try:
            write_atomic(path, json.dumps(value, separators=(",", ":")))
        except OSError:  # a read-only or full disk costs speed, never the build
            return

    # -- records ---------------------------------------------------------------------------------------------

    def load_records(
        self, root: Path, shown: Callable[[LoadedRecord], LoadedRecord]
    ) -> tuple[LoadResult, list[LoadedRecord]]:
        """``bench.record.load.load_records(root)`` and each record as ``shown`` makes it (the site's redaction),
        the pair read from the cache when the file's path and bytes are unchanged. A ``RecordError`` raised by
        ``shown`` becomes one of the result's errors, as the uncached path reports it."""
        fresh: dict[Path, LoadedRecord | None] = {}

        def load(path: Path) -> LoadedRecord:
            loaded, fresh[path] = self._record(path, path.relative_to(root).as_posix())
            return loaded

        result = load_records(root, load=load)  # the walk, the layout and duplicate-id checks: bench.record's
        out: list[LoadedRecord] = []
        for loaded in result.records:
            redacted = fresh.get(loaded.path)
            if redacted is None:
                try:
                    redacted = shown(loaded)
                except RecordError as exc:
                    result.errors.append(exc)
                    continue
                self._remember(loaded.path.relative_to(root).as_posix(), loaded, redacted)
            out.append(redacted)
        return result, out

    @staticmethod
    def _record_key(rel: str, text: str) -> str:
        return hashlib.sha256(rel.encode() + b"\0" + text.encode("utf-8")).hexdigest()

    def _record(self, path: Path, rel: str) -> tuple[LoadedRecord, LoadedRecord | None]:
        text = read_text_file(path, RecordError)
        entry = self._get("record", self._record_key(rel, text))
        if entry is None:
            return load_record(path), None
        loaded = LoadedRecord(record=Record.model_validate_json(entry["record"]), path=path, raw=text)
        if entry["shown"] is None:  # nothing was redacted: the site shows the record as read
            return loaded, loaded
        shown = LoadedRecord(record=Record.model_validate_json(entry["shown"]), path=path, raw=entry["raw"] or text)
        return loaded, shown

    def _remember(self, rel: str, loaded: LoadedRecord, shown: LoadedRecord) -> None:
        """Keep a freshly read record and its redacted form for the next build."""
        key = self._record_key(rel, loaded.raw)
        entry = {
            "record": loaded.record.model_dump_json(),
            "shown": None if shown is loaded else shown.record.model_dump_json(),
            "raw": shown.raw if shown.raw != loaded.raw else None,
        }
        self._put("record", key, entry)

    # -- rows of the frame -----------------------------------------------------------------------------------

    def frame_rows(
        self,
        records: Sequence[Record],
        confidence: float,
        compute: Callable[[Sequence[Record]], list[dict[str, Any]]],
    ) -> list[dict[str, Any]]:
        """``compute(records)`` (the frame's rows, record by record in the order given), each record's rows read
        from the cache when that record (its canonical JSON) and ``confidence`` are unchanged."""
        rows: list[dict[str, Any]] = []
        for r in records:
            canonical = r.model_dump_json()
            key = hashlib.sha256(f"{confidence!r}\0{canonical}".encode()).hexdigest()
            cached = self._get("rows", key)
            if cached is None:
                mine = compute([r])
                self._put("rows", key, [_jsonable(row) for row in mine])
            else:
                mine = [_restored(row, r) for row in cached]
            rows += mine
        return rows

    # -- bootstrap intervals of comparisons -------------------------------------------------------------------

    @staticmethod
    def intervals_key(*parts: str) -> str:
        """The key of a result computed from these parts (digests of the records involved, the settings...)."""
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def intervals(self, key: str, compute: Callable[[Any], Any]) -> Any:
        """``compute(found)``, where ``found`` is what the last build kept under ``key`` (None: nothing): the
        bootstrap intervals of a comparison (``bench.compare.compare_records``' ``ratio_intervals``), which
        ``compute`` reads and completes. What it leaves is kept for the next build when it differs from what was
        found."""
        found = self._get("intervals", key, counted=False)
        self.interval_hits += found is not None
        kept = copy.deepcopy(found)
        value = compute(found)
        if value != kept:
            self._put("intervals", key, value)
        return value

    # -- converted record pages ------------------------------------------------------------------------------

    def page(self, key: str) -> dict[str, Any] | None:
        """A record page's converted body as :meth:`remember_page` kept it under ``key``
        (``bench.site.record_page_key``), or None."""
        value = self._get("page", key)
        return value if isinstance(value, dict) else None

    def remember_page(self, key: str, value: dict[str, Any]) -> None:
        self._put("page", key, value)


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _restored(row: dict[str, Any], record: Record) -> dict[str, Any]:
    """A cached row with its times taken from the record itself (the same objects an uncached row holds)."""
    row["created_at"] = record.created_at
    row["measured_at"] = record.provenance.measured_at
    return row
