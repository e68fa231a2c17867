"""The site's generated files (record pages, downloads) kept by content and hard-linked into each build (pure of any
generator).

``mkdocs serve`` and ``mkdocs build`` empty the site folder and write every file again, and on this project's
machines creating a file costs about 1.2 ms, linking one about 0.02 ms: at 1,000 records the 2,700 downloads (written
to a temporary folder by the generator script, then copied) and 1,100 pages took a large share of a rebuild that
changes one record. So each generated file's bytes are kept once in the site cache, under their sha256
(``<cache>/files/ab/abcdef...``), and the site gets a hard link to that file.

A kept file is trusted only when its bytes still hash to its name: a site file changed in place (a hard link shares
its bytes with the kept file) is noticed and the kept file replaced by a new one (written whole, then renamed, so the
changed site keeps its own bytes). Where a link cannot be made (another file system, a file system without links, a
kept file removed by a concurrent prune), the file is written as before. :meth:`Outputs.prune` removes the kept files
that no site links to, that this build did not use and that no build used in the last hour (a kept file is touched
each time a build uses it: a concurrent build's are never removed under it).

A build also notes which kept file it made from which inputs (:meth:`Outputs.note`, a key of everything the file is
made from), and the next build (kept by ``bench.site.SiteCache`` in its code version's folder) links such a file
without making it again, reading it or hashing it, if the kept file's size and modification time are still those the
last build saw (:meth:`Outputs.recall`): as git's index trusts a file's stat, an edit in place changes them.

A file another process of the same build already kept (the record downloads that the workers reading the records
keep: :meth:`keep_offered` there, :meth:`offer` here) is linked the same way, if the kept file's size and modification
time are still those that process saw.

A large file joined from parts (the downloads of every record's rows: 430 MB at 10,000 records) that changed in some
parts only is made by :meth:`Outputs.keep_joined`: each part whose key the last such file of the same name held is
copied from that file (trusted the same way, by its size and modification time), not made again. When every part
has a key, the file is named by its parts' keys and the code version (``namespace``) rather than by its bytes' hash,
and the parts are copied by the kernel (``os.copy_file_range``), not read, hashed and written here: at 10,000 records,
the every-record JSON (338 MB) after one new record took 0.37-0.75 s that way, 0.14-0.16 s this way. The keys name
everything the bytes are made from (what copying a part by its key already relies on), so one name still stands for
one content.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench.atomic_write import new_file_mode, temporary_file, write_atomic

__all__ = ["KEPT_FILES_KEY", "Joined", "Offered", "Outputs", "Recalled"]

# Where a generator adapter lists the downloads it kept ({docs-relative path: kept file}), in its config (hooks/).
KEPT_FILES_KEY = "benchbook_kept_files"

GRACE_S = 3600.0  # a kept file used this recently is never pruned (another build may be about to link it)
PRUNE_EVERY_S = GRACE_S / 4

# What a build made, by a key of its inputs: {inputs: (kept file, its size, its mtime in ns)} (Outputs.recall)
Recalled = dict[str, tuple[str, int, int]]
# A file kept by another process of this build, as that process saw it: (its name, i.e. the bytes' sha256; its size;
# its mtime in ns) (Outputs.keep_offered, Outputs.offer)
Offered = tuple[str, int, int]
# What a build joined from parts (Outputs.keep_joined), by the file's name in the site: (kept file, its size, its
# mtime in ns, {part key: (offset, length) of the part's bytes in it})
Joined = dict[str, tuple[str, int, int, dict[str, tuple[int, int]]]]
COPY_CHUNK = 4 * 2**20  # bytes read at a time from the last joined file
KEYED_PREFIX = "k"  # the name of a file joined from keyed parts (Outputs.keep_joined): not a sha256 of its bytes

_Run = tuple[int, int, int]  # bytes to copy from the last joined file: (its open descriptor, start, length)


@dataclass
class Outputs:
    """The kept files under ``root``; ``used`` the names this build placed, ``linked``/``written`` what it did."""

    root: Path
    # what names a file joined from keyed parts besides its keys (the code version: the folder is shared by every
    # version, and the keys are another version's too)
    namespace: str = ""
    used: set[str] = field(default_factory=set)
    started: float = field(default_factory=time.time)
    linked: int = 0  # files the build linked from a kept file
    written: int = 0  # files it had to write (no kept file, or no link possible)
    _folders: set[str] = field(default_factory=set)  # folders known to exist (a site has thousands of files)
    # what the last build made ({inputs: its kept file as that build left it}, from :meth:`finish`): a file made
    # from the same inputs is taken from it unmade (most of a warm build's or a `mkdocs serve` rebuild's files are
    # the last one's). None: nothing is recalled or noted
    last: Recalled | None = None
    _recalled: Recalled = field(default_factory=dict)  # this build's entries
    # every site file this build linked: {its path: (the kept file's name, i.e. the bytes' sha256; size; mtime ns)}
    placed: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    _mode: int | None = None  # the permission bits of a new file (new_file_mode), once known
    _seen: dict[str, os.stat_result] = field(default_factory=dict)  # kept files recall() just found as noted
    last_joined: Joined = field(default_factory=dict)  # what the last build joined from parts (keep_joined)
    _joined: Joined = field(default_factory=dict)  # this build's
    _offered: Recalled = field(default_factory=dict)  # what other processes of this build kept (offer), by inputs

    @property
    def remember(self) -> bool:
        """Whether this build recalls what the last one made (:attr:`last`) and notes what it makes."""
        return self.last is not None

    def recall(self, inputs: str) -> str | None:
        """The path of the kept file that the last build made from ``inputs`` (a key of everything the file is made
        from), or that another process of this build kept from them (:meth:`offer`), if it still is as that build or
        process left it (size and modification time: a site file changed in place changes them); None otherwise."""
        for made in (self.last, self._offered):
            found = made.get(inputs) if made is not None else None
            if found is None:
                continue
            path, size, mtime_ns = found
            try:
                st = os.stat(path)
            except OSError:
                continue
            if st.st_size != size or st.st_mtime_ns != mtime_ns:
                continue
            self._seen[path] = st  # what link() would ask of a link to it (one inode)
            self.used.add(os.path.basename(path))
            if self.last is not None:  # noted for the next build
                self._recalled[inputs] = found
            return path  # as text: a build recalls 30,000 files at 10,000 records
        return None

    def keep_offered(self, data: bytes) -> Offered:
        """:meth:`keep` in a process other than the one that places the site's files: what that one needs to
        :meth:`offer` the kept file."""
        kept = self.keep(data)
        st = os.stat(kept)
        return kept.name, st.st_size, st.st_mtime_ns

    def offer(self, inputs: str, offered: Offered) -> None:
        """Take the file another process of this build kept from ``inputs`` (:meth:`keep_offered`): :meth:`recall`
        gives it while it is as that process saw it."""
        name, size, mtime_ns = offered
        self._offered[inputs] = (self._path(name), size, mtime_ns)

    def note(self, inputs: str, kept: Path) -> None:
        """Remember that ``kept`` was made from ``inputs`` (for :meth:`recall` in the next build)."""
        if self.last is not None:
            with contextlib.suppress(OSError):
                st = os.stat(kept)
                self._recalled[inputs] = (str(kept), st.st_size, st.st_mtime_ns)

    def finish(self) -> Recalled:
        """End the build: what it made or recalled, which the next build may recall (nothing older)."""
        return self._recalled

    def joined(self) -> Joined:
        """What this build joined from parts (:meth:`keep_joined`), with the last build's joined files it did not
        make again (recalled whole): what the next build may copy parts from."""
        kept = {name: found for name, found in self.last_joined.items() if name not in self._joined}
        return {**kept, **self._joined}

    def _path(self, name: str) -> str:
        """Where the kept file called ``name`` (its bytes' sha256) lies."""
        return os.path.join(self.root, name[:2], name)

    def keep(self, data: bytes) -> Path:
        """The kept file holding ``data`` (written when missing or no longer holding it)."""
        name = hashlib.sha256(data).hexdigest()
        path = self._path(name)
        self.used.add(name)
        try:
            with open(path, "rb") as fh:
                if fh.read() == data:  # the name is data's hash: the same bytes are the right ones
                    os.utime(path)  # used now: not pruned under a concurrent build (GRACE_S)
                    return Path(path)
        except OSError:
            pass
        write_atomic(Path(path), data, durable=False)  # a new file: a site linked to a changed one keeps its own
        return Path(path)

    def _write_parts(self, parts: Iterable[bytes | _Run], name: str | None) -> Path:
        """:meth:`keep` for bytes too many to hold at once, given in parts, some of them runs of the last joined
        file's bytes: written to a temporary file, then renamed to ``name`` (None: the bytes' sha256, for which the
        runs are read here; else they are copied by the kernel where it can), over a kept file of that name: the new
        file holds the bytes whatever the old one holds now, and a site linked to the old one keeps it."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = temporary_file(self.root, ".parts.")
        digest = hashlib.sha256() if name is None else None
        try:
            with os.fdopen(fd, "wb", buffering=0) as fh:
                for part in parts:
                    if type(part) is tuple:
                        _copy_run(part, fh.fileno(), digest)
                        continue
                    assert isinstance(part, bytes)
                    if digest is not None:
                        digest.update(part)
                    _write_all(fh.fileno(), part)
            if digest is not None:
                name = digest.hexdigest()
            assert name is not None
            path = Path(self._path(name))
            self.used.add(name)
            path.parent.mkdir(exist_ok=True)
            os.replace(tmp, path)
            return path
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _keyed_name(self, keys: list[str]) -> str:
        """The name of a file joined from parts with these keys, in this order (:data:`KEYED_PREFIX`)."""
        named = json.dumps([self.namespace, keys], ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return KEYED_PREFIX + hashlib.sha256(named).hexdigest()

    def keep_joined(self, name: str, parts: Iterable[tuple[str | None, Callable[[], bytes]]]) -> Path:
        """:meth:`keep` of ``parts`` given as (a key naming everything the part's bytes are made from, or None;
        how to make them), for the file the site calls ``name``: a part whose key the last file joined under that
        name holds is copied from it (runs of consecutive parts at once), not made, if that file is still as the
        last build left it (its size and modification time); every other part is made. Remembered for the next
        build (:meth:`joined`)."""
        listed = list(parts)
        keys = [key for key, _ in listed]
        keyed = None if any(key is None for key in keys) else self._keyed_name(keys)  # type: ignore[arg-type]
        source = self._joined_source(name)
        layout: dict[str, tuple[int, int]] = {}
        offset = 0
        run: list[int] = []  # [start, length] of the bytes to copy from the source next

        def copied() -> Iterable[_Run]:
            if run and source is not None:
                yield source[0], run[0], run[1]

        def pieces() -> Iterable[bytes | _Run]:
            nonlocal offset, run
            for key, make in listed:
                found = source[1].get(key) if source is not None and key is not None else None
                if found is not None:
                    start, length = found
                    if run and run[0] + run[1] == start:
                        run[1] += length
                    else:
                        yield from copied()
                        run = [start, length]
                    layout[key] = (offset, length)  # type: ignore[index]  # found: key is not None
                    offset += length
                    continue
                yield from copied()
                run = []
                data = make()
                if key is not None:
                    layout[key] = (offset, len(data))
                offset += len(data)
                yield data
            yield from copied()

        try:
            path = self._write_parts(pieces(), keyed)
        except BaseException:
            self.last_joined.pop(name, None)  # not to be copied from again (nor by the next build)
            raise
        finally:
            if source is not None:
                os.close(source[0])
        with contextlib.suppress(OSError):
            st = os.stat(path)
            self._joined[name] = (str(path), st.st_size, st.st_mtime_ns, layout)
        return path

    def _joined_source(self, name: str) -> tuple[int, dict[str, tuple[int, int]]] | None:
        """The last file joined as ``name``, open, and its parts, if it is still as the last build left it."""
        found = self.last_joined.get(name)
        if type(found) is not tuple or len(found) != 4 or not isinstance(found[3], dict):
            return None
        path, size, mtime_ns, layout = found
        if not all(type(v) is tuple and len(v) == 2 for v in layout.values()):
            return None
        try:
            fd = os.open(path, os.O_RDONLY)
        except (OSError, TypeError):
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            return None
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            os.close(fd)
            return None
        return fd, layout

    def place(self, data: bytes, dest: Path) -> Path | None:
        """Make ``dest`` hold ``data``: a link to the kept file (returned), else a file written there (None)."""
        try:
            kept = self.keep(data)
        except OSError:  # the cache cannot be written: the site file alone
            self._folder(str(dest))
            _write(dest, data)
            self.written += 1
            return None
        self.link(kept, dest)
        return kept

    def link(self, kept: Path | str, dest: Path | str) -> None:
        """Make ``dest`` a link to ``kept`` (a file :meth:`keep` returned), else a copy of it."""
        target = str(dest)
        source = str(kept)
        self._folder(target)
        try:
            os.link(source, target)
        except FileExistsError:
            os.unlink(target)  # never written through: it may be a link to another kept file
            self.link(source, target)
            return
        except OSError:
            shutil.copyfile(source, target)
            self.written += 1
            return
        self.linked += 1
        with contextlib.suppress(OSError):
            # the link is the kept file (one inode): as recall() saw it a moment ago, else asked now
            st = self._seen.pop(source, None) or os.stat(target)
            name = os.path.basename(source)
            if not name.startswith(KEYED_PREFIX):  # placed: files whose name is their bytes' sha256
                self.placed[target] = (name, st.st_size, st.st_mtime_ns)
            self._permit(target, st.st_mode & 0o777)

    def _permit(self, target: str, mode: int) -> None:
        """Give a kept file the permissions of a new file (builds before 2026-12-03 kept files readable by their owner
        alone, and the site shares them: a web server running as another user could not read its pages)."""
        if self._mode is None:
            self._mode = new_file_mode(self.root)
        if mode != self._mode:
            os.chmod(target, self._mode)  # the kept file's: the link shares it; its bytes and mtime stay

    def _folder(self, target: str) -> None:
        folder = os.path.dirname(target)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)

    def prune(self) -> int:
        """Remove the kept files that no site links to (one link: the kept name alone), that this build did not
        use and that no build used in the last :data:`GRACE_S` seconds; the number removed. At most once per
        :data:`PRUNE_EVERY_S` (a stamp file's time): a file becomes removable only after :data:`GRACE_S` anyway,
        and a walk over 40,000 kept files is not free."""
        removed = 0
        if not self.root.is_dir():
            return 0
        stamp = self.root / ".pruned"
        try:
            if stamp.stat().st_mtime > self.started - PRUNE_EVERY_S:
                return 0
        except OSError:
            pass
        try:
            stamp.touch()
        except OSError:
            return 0
        for folder in self.root.iterdir():
            if not folder.is_dir() or folder.name.startswith("."):
                continue
            for path in folder.iterdir():
                try:
                    st = path.stat()
                    if path.name not in self.used and st.st_nlink == 1 and st.st_mtime < self.started - GRACE_S:
                        path.unlink()
                        removed += 1
                except OSError:
                    continue
        return removed


def _write(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() or dest.is_symlink():
        dest.unlink()  # never through an old link into a kept file
    with open(dest, "wb") as fh:
        fh.write(data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_run(run: _Run, fd: int, digest: hashlib._Hash | None) -> None:
    """Append the run's bytes of the last joined file to ``fd``: read here when they are hashed (``digest``), else
    copied by the kernel (read here where it cannot); an error if the file no longer holds them (it was cut short
    since it was checked)."""
    source, start, left = run
    while left > 0 and digest is None:
        try:
            n = os.copy_file_range(source, fd, left, start)
        except (AttributeError, OSError):  # no such call (not Linux), or not between these files: read below
            break
        if n == 0:
            raise OSError(f"a kept file ended early while parts were copied from it (at byte {start})")
        start += n
        left -= n
    while left > 0:
        data = os.pread(source, min(left, COPY_CHUNK), start)
        if not data:
            raise OSError(f"a kept file ended early while parts were copied from it (at byte {start})")
        if digest is not None:
            digest.update(data)
        _write_all(fd, data)
        start += len(data)
        left -= len(data)
