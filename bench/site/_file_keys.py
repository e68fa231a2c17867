"""Record files' site-cache keys (:func:`bench.site._cache.record_key`: the sha256 of a file's path and bytes)
without reading the files that did not change since the last build.

A warm build at 3,000 records read every record file (about 100 kB each) only to key it: 2.5 s of a profiled build.
As git's index does, the last build's key of a file is trusted while the file's size, modification and change times
(nanoseconds) and inode are those the last build saw: writing a file changes its modification and change times
(and ``touch`` setting an old modification time back still changes the change time), replacing it (``git checkout``,
an editor's save by rename) changes its inode. The file is stat-ed before it is read, so a file written between the
two is read again by the next build. The keys are left in the site cache's code-version folder (``SiteCache.state``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import read_text_file
from bench.record.errors import RecordError

from ._cache import SiteCache, record_key

__all__ = ["FileKeys"]

STATE = "record-file-keys"
Signature = tuple[int, int, int, int]  # size, mtime ns, ctime ns, inode


@dataclass
class FileKeys:
    """The keys of one build's record files; ``last``: the last build's ({path in the records folder: (the file's
    :data:`Signature` then, its key)})."""

    last: dict[str, tuple[Signature, str]] = field(default_factory=dict)
    now: dict[str, tuple[Signature, str]] = field(default_factory=dict)
    read: int = 0  # files read to be keyed

    @classmethod
    def of(cls, cache: SiteCache | None) -> FileKeys:
        """The keys the last build of this code version left in ``cache`` (none without one)."""
        last = cache.state(STATE) if cache is not None else None
        return cls(last if isinstance(last, dict) else {})

    def key(self, path: Path, rel: str) -> tuple[str, str | None]:
        """The key of the record file ``path`` (``rel``: its path in the records folder) and its text where it had
        to be read (None: its signature is the last build's). An unreadable file raises its ``RecordError``."""
        try:
            st = os.stat(path)
            signature: Signature | None = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        except OSError:
            signature = None  # read_text_file reports it
        found = self.now.get(rel) or self.last.get(rel)  # keyed already in this build, else in the last
        if signature is not None and type(found) is tuple and len(found) == 2:
            known, key = found
            if known == signature and type(key) is str:
                self.now[rel] = (signature, key)
                return key, None
        text = read_text_file(path, RecordError)
        self.read += 1
        key = record_key(rel, text)
        if signature is not None:
            self.now[rel] = (signature, key)
        return key, text

    def finish(self, cache: SiteCache | None) -> None:
        """Leave this build's keys to the next build."""
        if cache is not None:
            cache.keep_state(STATE, self.now)
