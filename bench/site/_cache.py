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
written atomically (no fsync: a crash may lose an entry, never tear one) as JSON or, for records
(:mod:`bench.site._site_records`), as pickles of what was validated, restored without validating 100 KB again (the
folder is the user's own); a folder that cannot be written costs speed, never the build. Entries made in batches
(the records a loading process reads together, the record pages a converter makes together) lie in one file per
batch (:mod:`bench.site._cache_packs`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import re
import shutil
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy
import pydantic

from bench.atomic_write import write_atomic

from ._cache_packs import PACKS, PackIndex, write_pack
from ._outputs import Outputs

__all__ = ["CACHE_ENV", "VERSION_GRACE_S", "SiteCache", "code_version", "default_cache_dir", "record_key"]

CACHE_ENV = "BENCHBOOK_CACHE_DIR"
RECALLED = "recalled"  # SiteCache.state: the outputs the last build made (bench.site._outputs)
JOINED = "joined"  # SiteCache.state: the files the last build joined from parts (Outputs.keep_joined)
# (cache folder, name) -> the state the last build of this process left (SiteCache.keep_state)
_STATE: dict[tuple[str, str], Any] = {}
PACKAGE = Path(__file__).resolve().parents[1]  # bench/
VERSION_GRACE_S = 14 * 24 * 3600
"""A code version's folder that no build used for this long is removed (:meth:`SiteCache.prune_versions`): every
upgrade or change of benchbook starts a new folder (252 MB after a cold build of 1,000 synthetic records), and
nothing else would ever remove the last one's. Two checkouts of different versions sharing the default folder each
keep theirs while either is built at least once in this time."""
USED = ".used"  # in a code version's folder: touched by every build of that version (SiteCache.mark_used)
VERSION_CHARS = 24  # a code version's folder: the first this many hex digits of its code_version (SiteCache.folder)
_VERSION_NAME = re.compile(f"[0-9a-f]{{{VERSION_CHARS}}}")  # what SiteCache.prune_versions may remove: nothing else


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
    _packs: dict[str, PackIndex] = field(default_factory=dict, repr=False)  # kind -> its packs (put_pickled_many)

    @property
    def folder(self) -> Path:
        return self.root / self.version[:VERSION_CHARS]

    @cached_property
    def outputs(self) -> Outputs:
        """The generated files kept by content and linked into each build (:mod:`bench.site._outputs`): one folder
        for every code version (a file's name is its bytes' hash); what the last build of this code version made
        from which inputs (:meth:`finish`) is recalled."""
        last, joined = self.state(RECALLED), self.state(JOINED)
        return Outputs(
            self.root / "files",
            namespace=self.version,
            last=last if isinstance(last, dict) else {},
            last_joined=joined if isinstance(joined, dict) else {},
        )

    def mark_used(self) -> None:
        """Note that a build of this code version uses its folder (now): :meth:`prune_versions` keeps a folder a
        build used in the last :data:`VERSION_GRACE_S`. A folder that cannot be written costs nothing but that."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / USED).touch()
        except OSError:
            pass

    def prune_versions(self, now: float | None = None) -> list[str]:
        """Remove the folders of the other code versions that no build used (:meth:`mark_used`; a folder from before
        builds marked it: its own modification time) in the last :data:`VERSION_GRACE_S`; their names, sorted. This
        version's folder, the kept files (``files``, pruned by ``Outputs.prune``) and anything not named as a code
        version's folder are left alone."""
        now = time.time() if now is None else now
        removed: list[str] = []
        try:
            folders = [p for p in self.root.iterdir() if _VERSION_NAME.fullmatch(p.name) and p.is_dir()]
        except OSError:
            return removed
        for folder in folders:
            if folder.name == self.folder.name:
                continue
            try:
                used = _used_at(folder)
            except OSError:
                continue
            if used < now - VERSION_GRACE_S:
                shutil.rmtree(folder, ignore_errors=True)
                if not folder.exists():
                    removed.append(folder.name)
        return sorted(removed)

    def finish(self) -> None:
        """End a build: what its outputs made is what the next build may recall (``Outputs.recall``) or copy parts
        from (``Outputs.keep_joined``)."""
        self.keep_state(RECALLED, self.outputs.finish())
        self.keep_state(JOINED, self.outputs.joined())

    # -- what one build leaves to the next (small: one file each) -----------------------------------------------

    def state(self, name: str) -> Any:
        """What the last build of this code version left under ``name`` (:meth:`keep_state`), or None: from this
        process's memory (``mkdocs serve`` rebuilds), else from the folder."""
        key = (str(self.folder), name)
        if key in _STATE:
            return _STATE[key]
        return self.peek("state", name)

    def keep_state(self, name: str, value: Any) -> None:
        """Leave ``value`` to the next build (in this process, and in the folder for another); the caller does not
        change it afterwards. A process keeps the state of one cache folder at a time."""
        folder = str(self.folder)
        for key in [k for k in _STATE if k[0] != folder]:
            del _STATE[key]
        _STATE[(folder, name)] = value
        self.put_pickled("state", name, value)

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
            write_atomic(path, json.dumps(value, separators=(",", ":")), durable=False)
        except OSError:  # a read-only or full disk costs speed, never the build
            return

    # -- entries kept as pickles (what was validated, restored without validating it again) -------------------

    def _pickle_path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key[:2] / f"{key}.pickle"

    def _pack_index(self, kind: str) -> PackIndex:
        found = self._packs.get(kind)
        if found is None:
            found = self._packs[kind] = PackIndex(self.folder / kind / PACKS)
        return found

    def peek(self, kind: str, key: str, *, compressed: bool = False) -> Any:
        """The pickled entry, or None; not counted as a hit or a miss (a second read of an entry found already).
        ``compressed``: kept so by :meth:`put_pickled` (or :meth:`put_pickled_many`). An entry file of its own is
        read first (an entry rewritten whole lies there), a pack after (``bench.site._cache_packs``)."""
        try:
            data: bytes | None = self._pickle_path(kind, key).read_bytes()
        except FileNotFoundError:
            data = self._pack_index(kind).read(key)
        except OSError:
            return None
        if data is None:
            return None
        try:
            return pickle.loads(zlib.decompress(data) if compressed else data)
        except Exception:  # torn by another process's crash, or from another Python: a miss
            return None

    def has_pickled(self, kind: str, key: str) -> bool:
        """Whether an entry lies under ``kind``/``key``, in a file of its own or a pack (not read, not counted)."""
        return self._pickle_path(kind, key).is_file() or self._pack_index(kind).has(key)

    def get_pickled(self, kind: str, key: str, *, compressed: bool = False) -> Any:
        """The entry ``put_pickled`` kept under ``kind``/``key``, or None (counted: a hit or a miss)."""
        value = self.peek(kind, key, compressed=compressed)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put_pickled(self, kind: str, key: str, value: Any, *, compressed: bool = False) -> None:
        """Keep ``value`` (pickled: the cache folder is the user's own, read by nobody else) for the next build;
        ``compressed``: zlib level 1 (fewer bytes to read where the cache is not held in memory)."""
        try:
            write_atomic(self._pickle_path(kind, key), _encoded(value, compressed), durable=False)
        except OSError:  # a read-only or full disk costs speed, never the build
            return

    def put_pickled_many(self, kind: str, values: dict[str, Any], *, compressed: bool = False) -> None:
        """:meth:`put_pickled` of each key and value, in one file (a pack: ``bench.site._cache_packs``) rather than
        one each: for the processes that make entries in batches. Only for entries a key names by content (the same
        key, the same entry): a pack is never rewritten."""
        write_pack(self.folder / kind / PACKS, {key: _encoded(value, compressed) for key, value in values.items()})

    @staticmethod
    def entry_key(*parts: str) -> str:
        """The key of an entry computed from these parts (a kind, the digests of the records involved, the
        settings...): bootstrap intervals, a configuration's flags, a comparison's downloads."""
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    # -- bootstrap intervals of comparisons -------------------------------------------------------------------

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

    # -- converted record pages, generated pages' Markdown (bench.site._page_inputs) --------------------------

    def page(self, key: str) -> dict[str, Any] | None:
        """A record page's converted body as :meth:`remember_page` kept it under ``key``
        (``bench.site.record_page_key``), or None. Pickled: a warm build reads one per page, and a 100 kB body
        reads back about ten times faster than as JSON."""
        value = self.peek("page", key)  # hits and misses count records
        return value if isinstance(value, dict) else None

    def has_page(self, key: str) -> bool:
        """Whether :meth:`page` would find an entry under ``key`` (not read)."""
        return self.has_pickled("page", key)

    def remember_page(self, key: str, value: dict[str, Any]) -> None:
        self.put_pickled("page", key, value)

    def remember_pages(self, values: dict[str, dict[str, Any]]) -> None:
        """:meth:`remember_page` of each key and body, in one pack (a batch of pages converted together)."""
        self.put_pickled_many("page", values)


def _used_at(folder: Path) -> float:
    """When a build last used a code version's folder: its :data:`USED` mark's time, else (a folder from before builds
    marked it) the folder's own."""
    try:
        return (folder / USED).stat().st_mtime
    except FileNotFoundError:
        return folder.stat().st_mtime


def _encoded(value: Any, compressed: bool) -> bytes:
    """An entry's bytes as :meth:`SiteCache.peek` reads them: pickled, then zlib level 1 when ``compressed``."""
    data = pickle.dumps(value, protocol=5)
    return zlib.compress(data, 1) if compressed else data


def record_key(rel: str, text: str) -> str:
    """A record file's cache key: its path in the records folder and its bytes."""
    return hashlib.sha256(rel.encode() + b"\0" + text.encode("utf-8")).hexdigest()
