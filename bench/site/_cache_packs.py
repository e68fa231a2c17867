"""Many site-cache entries of one kind in one file (pure but for the files it reads and writes).

A cold build writes several entries per record (its loaded record, its samples, its page's body). On this project's
2-core machines a new file cost 0.4-0.8 ms of CPU to create in a build's cache folder (measured with ``open(O_CREAT |
O_EXCL)``: the file system's inode allocation, slower after many deletions), and a cold build at 1,000 records created
7,356 cache files: 3 to 6 of its 50 to 60 CPU seconds. The processes that make entries in batches
(``bench.site._site_records``' loading chunks, the record pages' chunks) write each batch as one *pack* instead:
``<kind>/packs/<name>.pack``, written atomically, never changed afterwards. Its entries are the bytes a single entry
file would hold, under the same content keys, so a pack and a single file for one key hold equal entries;
:class:`~bench.site._cache.SiteCache` reads a single file first (an entry rewritten whole lies there) and a pack after.

A pack: :data:`MAGIC`, the length of its index (8 bytes, little-endian), its index (a pickled ``{key: (offset,
length)}``, offsets from the end of the index), then the entries. A pack that cannot be read (damaged, or from
another version of this format) holds nothing: its entries are made again.
"""

from __future__ import annotations

import os
import pickle
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.atomic_write import write_atomic

__all__ = ["MAGIC", "PACKS", "PackIndex", "write_pack"]

MAGIC = b"BBPACK1\n"
PACKS = "packs"  # the folder of a kind's packs
_HEADER = len(MAGIC) + 8
# A folder's modification time moves in steps of the kernel's clock tick (a few milliseconds on Linux): a pack added
# within one tick of the last one seen leaves it unchanged. An index read that close to the folder's last change
# reads the folder again on its next miss (git's "racy" index entries, the same way).
_RACY_NS = 1_000_000_000


def write_pack(folder: Path, blobs: Mapping[str, bytes]) -> Path | None:
    """One pack of ``blobs`` (key -> the entry's bytes) in ``folder``; None when there is nothing to write or the
    folder cannot be written (a full or read-only disk costs speed, never the build)."""
    if not blobs:
        return None
    index: dict[str, tuple[int, int]] = {}
    at = 0
    for key, blob in blobs.items():
        index[key] = (at, len(blob))
        at += len(blob)
    head = pickle.dumps(index, protocol=5)
    path = folder / f"{secrets.token_hex(12)}.pack"
    try:
        write_atomic(path, b"".join([MAGIC, len(head).to_bytes(8, "little"), head, *blobs.values()]), durable=False)
    except OSError:
        return None
    return path


def _read_index(path: Path) -> dict[str, tuple[int, int]] | None:
    """The pack's index with its offsets from the start of the file; None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            top = fh.read(_HEADER)
            if len(top) != _HEADER or not top.startswith(MAGIC):
                return None
            size = int.from_bytes(top[len(MAGIC) :], "little")
            head = fh.read(size)
        if len(head) != size:
            return None
        index = pickle.loads(head)
    except Exception:  # unreadable, torn, or not a pack: nothing in it is used
        return None
    if type(index) is not dict:
        return None
    start = _HEADER + size
    out: dict[str, tuple[int, int]] = {}
    for key, spot in index.items():
        if type(key) is not str or type(spot) is not tuple or len(spot) != 2:
            return None
        out[key] = (start + spot[0], spot[1])
    return out


@dataclass
class PackIndex:
    """Where each entry of a kind's packs lies, read from the packs' indexes as they appear in ``folder``."""

    folder: Path
    _where: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # key -> (pack, offset, length)
    _seen: set[str] = field(default_factory=set)  # the packs read already (or found unreadable)
    _mtime: int | None = None  # the folder's modification time when it was last listed
    _listed: int = 0  # when it was last listed (ns since the epoch)

    def _refresh(self) -> None:
        """Read the indexes of packs not seen yet, when the folder may have changed since it was last listed."""
        try:
            mtime = os.stat(self.folder).st_mtime_ns
        except OSError:  # no pack written yet
            return
        if mtime == self._mtime and self._listed - mtime > _RACY_NS:
            return
        now = time.time_ns()
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        self._mtime, self._listed = mtime, now
        for name in names:
            if not name.endswith(".pack") or name in self._seen:
                continue
            self._seen.add(name)
            index = _read_index(self.folder / name)
            for key, (offset, length) in (index or {}).items():
                self._where.setdefault(key, (name, offset, length))

    def _spot(self, key: str) -> tuple[str, int, int] | None:
        spot = self._where.get(key)
        if spot is None:
            self._refresh()
            spot = self._where.get(key)
        return spot

    def has(self, key: str) -> bool:
        """Whether a pack holds an entry under ``key`` (the folder listed again if it may have changed)."""
        return self._spot(key) is not None

    def read(self, key: str) -> bytes | None:
        """The bytes of the entry under ``key``, or None (no pack holds it, or its pack cannot be read)."""
        spot = self._spot(key)
        if spot is None:
            return None
        name, offset, length = spot
        try:
            with open(self.folder / name, "rb") as fh:
                fh.seek(offset)
                data = fh.read(length)
        except OSError:
            return None
        return data if len(data) == length else None
