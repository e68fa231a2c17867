"""Work split over forked processes (pure of any generator): a cold site build converts hundreds of page bodies, each
independent of the others, on a machine with more than one core.

The children inherit everything the build loaded (a fork, no pickling) and hand their results back through the
site cache (``bench.site._cache``: entries written atomically), so a child that fails or is killed costs time,
never a result: whatever it did not leave in the cache, the parent makes itself. ``$BENCHBOOK_BUILD_WORKERS`` sets
the number of processes (1: none forked; default: the cores this process may use).
"""

from __future__ import annotations

import gc
import os
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from bench.redact import redact_text

__all__ = [
    "CHILD_ITEMS",
    "CHUNKED_RESIDENT_MAX",
    "FORK_RESIDENT_MAX",
    "WORKERS_ENV",
    "WORKERS_KEY",
    "WorkersError",
    "build_workers",
    "forks",
    "in_workers",
    "resident_bytes",
]

WORKERS_ENV = "BENCHBOOK_BUILD_WORKERS"
# A build process holding more than this works alone: a forked child copies what it touches of the parent's memory
# (a build of 2,000 records peaked at 803 MiB in one process and 1,572 MiB in two; bench.site.in_workers). At 10,000
# records the parent holds about 1,000 MiB once loaded, and the generated pages made in two processes took the build
# to 1,971 MiB: so a parent may fork for such work only while two of it stay well under 2 GiB
FORK_RESIDENT_MAX = 768 * 2**20
# Items per forked child for work that reads across the loaded site, page by page (in_workers's per_child), and the
# most a build process may hold and still fork for it. At 10,000 records, children of 500 record pages each took the
# build from about 1,150 MiB to at most 1,417 MiB (d15d1ab; 1,421 MiB with the queue, site benchmark at ac01694),
# where one child for all of them took it to 2,033 MiB
CHILD_ITEMS = 500
CHUNKED_RESIDENT_MAX = 1536 * 2**20
# Where a build's adapter notes the processes it may use, in its config (hooks/: read by the generator script)
WORKERS_KEY = "benchbook_build_workers"
T = TypeVar("T")


class WorkersError(ValueError):
    """A bad ``$BENCHBOOK_BUILD_WORKERS``."""


def build_workers() -> int:
    """The processes a build may use: ``$BENCHBOOK_BUILD_WORKERS`` (a whole number ≥ 1), else the usable cores."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not raw.isdigit() or int(raw) < 1:
        shown = redact_text(raw[:80])  # what a user typed into the environment reaches the terminal redacted
        raise WorkersError(f"${WORKERS_ENV}: expected a whole number of processes, at least 1, got {shown!r}")
    return int(raw)


def resident_bytes() -> int:
    """This process's resident set (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def forks(workers: int, max_resident: int | None = None) -> bool:
    """Whether :func:`in_workers` would fork now: more than one worker, ``os.fork`` there, and this process holding
    no more than ``max_resident`` bytes."""
    too_big = max_resident is not None and resident_bytes() > max_resident
    return workers > 1 and hasattr(os, "fork") and not too_big


def in_workers(
    items: Sequence[T],
    work: Callable[[Sequence[T]], None],
    workers: int,
    *,
    child_setup: Callable[[], None],
    max_resident: int | None = None,
    per_child: int | None = None,
    chunk: int = 1,
    done: Callable[[Sequence[T]], None] | None = None,
    listen: bool = False,
) -> int:
    """``work`` over ``items`` in ``workers`` processes: this one and ``workers`` − 1 forked children (each runs
    ``child_setup`` first, e.g. to keep its log quiet) take the items ``chunk`` at a time from one queue
    (:class:`_Queue`) until it is empty, so a process that meets slower items takes fewer of them (dealt out in turn,
    one process could end long before another); returns when every child has ended, with the number that ended
    well. ``work`` leaves its results where the parent finds them (the site cache): nothing comes back through this
    call. Without ``os.fork`` (or one worker), or when this process holds more than ``max_resident`` bytes,
    everything runs here: a child shares the parent's memory only until either writes to it, and work over a loaded
    site touches most of it (a build of 2,000 records peaked at 803 MiB in one process and 1,572 MiB in two).

    A child that fails loses at most the chunk it was working on (the caller makes what is missing); one that fails
    before taking any loses nothing. When this process's own work fails, the queue is emptied, so the children end
    after their current chunk, and the error is raised once they have.

    ``per_child``: a child ends after at most this many items, and this process forks a new one in its place between
    two of its own chunks, so that what a child copies of the parent's memory, and what it makes of its own, is given
    back every ``per_child`` items rather than held to the end (10,000 record pages in two processes, one child: the
    build's memory grew by 880 MiB while they were made).

    ``done``: called in this process with the items of each chunk whose work ended well, in whichever process: its
    own chunks as it ends them, the children's (which report each chunk they end through a pipe, :class:`_Reports`)
    between its own chunks and, once the queue is empty, while it waits for the children. The parent can so take
    in the children's results while they still work, rather than all at the end, alone.

    ``listen`` (with ``done``, without ``per_child``): this process takes no chunk itself while it has children
    (``workers`` of them): it only hears of theirs, so that its memory holds what ``done`` keeps and nothing of the
    work's own (1,000 records' cache entries read back between chunks of its own left it 58 MiB larger than read back
    after them)."""
    if listen and (done is None or per_child is not None):
        raise ValueError("in_workers: listen needs done and no per_child")
    if not forks(workers, max_resident):
        work(items)
        if done is not None:
            done(items)
        return 0
    queue = _Queue(len(items), chunk)
    reports = _Reports() if done is not None else None
    limit = None if per_child is None else max(1, per_child)
    children: set[int] = set()
    ok = 0  # children that ended well

    forked = workers if listen else workers - 1

    def spawn() -> None:
        while len(children) < forked and (
            pid := _fork(lambda: _child(queue, items, work, child_setup, limit, reports))
        ):
            children.add(pid)

    def reported(block: bool) -> None:
        """``done`` for each chunk the children reported ended (until every child has ended: ``block``)."""
        if reports is not None and done is not None:
            for taken in reports.ended(queue, block=block):
                done(items[taken])

    def own(taken: slice) -> None:
        """One chunk done here (and ``done`` told of it)."""
        work(items[taken])
        if done is not None:
            done(items[taken])

    def reap(block: bool) -> bool:
        """Collect the children that have ended (all of them: ``block``); whether one ended at ``per_child``."""
        nonlocal ok
        full = False
        for pid in list(children):
            done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done:
                children.discard(pid)
                code = os.waitstatus_to_exitcode(status)
                ok += code in (_DRAINED, _FULL)
                full |= code == _FULL
        return full

    try:
        spawn()
        while (not listen or not children) and (taken := queue.take()) is not None:  # listening: only without a child
            own(taken)
            reported(block=False)
            if reap(block=False):  # a child reached per_child: a new one takes its place
                spawn()
        if reports is not None:  # no child is forked any more: the reports end when the children have
            reports.stop_writing()
            reported(block=True)
        while (taken := queue.take()) is not None:  # what no child took (listening, children that ended early): here
            own(taken)
    except BaseException:
        queue.close()  # nothing more for the children to take: they end after their current chunk
        raise
    finally:  # the children end before this call does, even when this process's work fails
        if reports is not None:
            reports.stop_writing()
        reap(block=True)
        queue.release()
        if reports is not None:
            reports.release()
    return ok


_DRAINED, _FULL = 0, 3  # a child's exit codes: it found the queue empty; it reached per_child (a new child follows)


def _child(
    queue: _Queue,
    items: Sequence[T],
    work: Callable[[Sequence[T]], None],
    child_setup: Callable[[], None],
    limit: int | None,
    reports: _Reports | None,
) -> int:
    child_setup()
    done = 0
    while limit is None or done + queue.chunk <= limit or done == 0:  # one chunk at least, even past the limit
        taken = queue.take()
        if taken is None:
            return _DRAINED
        work(items[taken])
        if reports is not None:
            reports.report(queue, taken)
        done += taken.stop - taken.start
    return _FULL


def _fork(body: Callable[[], int]) -> int | None:
    """A forked child running ``body`` (its exit code; 1 when it raises) without the parent's exit handlers; None
    when no process is to be had."""
    sys.stdout.flush()
    sys.stderr.flush()
    frozen = gc.get_freeze_count() > 0  # a build may hold its loaded site frozen already (hooks/site_hooks.py)
    gc.freeze()  # the children do not write to the parent's objects' pages just by collecting them
    try:
        pid = os.fork()
    except OSError:
        return None
    finally:
        if not frozen:
            gc.unfreeze()
    if pid == 0:
        code = 1
        try:
            code = body()
        finally:
            os._exit(code)
    return pid


class _Queue:
    """The chunks of a list of items, taken one at a time by any of several forked processes: their numbers written
    whole into a pipe before the first fork, each taken by one read of its 4 bytes (a pipe's reads do not interleave,
    and every read takes exactly one number). At most :data:`QUEUE_MAX` numbers, well inside a pipe's buffer; more
    items make larger chunks."""

    def __init__(self, n: int, chunk: int) -> None:
        self.n = n
        self.chunk = max(1, chunk, -(-n // QUEUE_MAX))
        self._read, write = os.pipe()
        try:
            data = array("I", range(-(-n // self.chunk))).tobytes()
            while data:
                data = data[os.write(write, data) :]
        finally:
            os.close(write)

    def take(self) -> slice | None:
        """The next chunk's items (a slice of the list), or None when every chunk is taken."""
        if self._read < 0:
            return None
        data = os.read(self._read, 4)
        if len(data) < 4:
            return None
        (k,) = array("I", data)
        return self.chunk_at(k)

    def chunk_at(self, k: int) -> slice:
        """The items of chunk number ``k``."""
        return slice(k * self.chunk, min(self.n, (k + 1) * self.chunk))

    def close(self) -> None:
        """Take every chunk left, so that no process takes another."""
        while self.take() is not None:
            pass

    def release(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


class _Reports:
    """The chunks the children have ended, as their numbers in a pipe: each written by one 4-byte write (a pipe
    does not interleave writes of up to ``PIPE_BUF`` bytes), read by the parent without waiting between its own
    chunks, and to the end (every child's end of the pipe closed) once it forks no more. At most :data:`QUEUE_MAX`
    chunks, so a child never waits for the parent to read."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)

    def report(self, queue: _Queue, taken: slice) -> None:
        """In a child: the chunk ``taken`` ended well."""
        os.write(self._write, array("I", [taken.start // queue.chunk]).tobytes())

    def ended(self, queue: _Queue, *, block: bool) -> Iterator[slice]:
        """The chunks reported since the last call, each as soon as it is read: those written by now, or
        (``block``) every one until the children have all ended (:meth:`stop_writing` first)."""
        os.set_blocking(self._read, block)
        left = b""
        while True:
            try:
                part = os.read(self._read, 1 << 16)
            except BlockingIOError:
                return
            if not part:
                return
            data = left + part
            whole = len(data) - len(data) % 4
            left = data[whole:]
            yield from (queue.chunk_at(k) for k in array("I", data[:whole]))

    def stop_writing(self) -> None:
        """This process's end of the pipe closed (no child is forked after this)."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def release(self) -> None:
        self.stop_writing()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


QUEUE_MAX = 4096  # 16 KiB of chunk numbers: a pipe holds 64 KiB (Linux), and writing more before any read would block
