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
from collections.abc import Callable, Sequence
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
# most a build process may hold and still fork for it. At 10,000 records, rounds of 500 record pages per process
# took the build from about 1,150 MiB to at most 1,417 MiB, where one child for all of them took it to 2,033 MiB
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
) -> int:
    """``work`` over ``items`` in ``workers`` processes: the items are dealt out in turn, all but the first share go
    to forked children (each runs ``child_setup`` first, e.g. to keep its log quiet), the first share runs here;
    returns when every child has ended, with the number that ended well. ``work`` leaves its results where the
    parent finds them (the site cache): nothing comes back through this call. Without ``os.fork`` (or one worker),
    or when this process holds more than ``max_resident`` bytes, everything runs here: a child shares the parent's
    memory only until either writes to it, and work over a loaded site touches most of it (a build of 2,000
    records peaked at 803 MiB in one process and 1,572 MiB in two).

    ``per_child``: at most this many items per child. The work then goes in rounds of ``workers`` × ``per_child``
    items, a new child for each share of each round, so that what a child copies of the parent's memory, and what
    it makes of its own, is given back every ``per_child`` items rather than held to the end (10,000 record pages in
    two processes, one child: the build's memory grew by 880 MiB while they were made)."""
    if not forks(workers, max_resident):
        work(items)
        return 0
    size = len(items) if per_child is None else max(1, per_child) * workers
    ok = 0
    for start in range(0, len(items), max(1, size)):
        ok += _round(items[start : start + size], work, workers, child_setup)
    return ok


def _round(
    items: Sequence[T], work: Callable[[Sequence[T]], None], workers: int, child_setup: Callable[[], None]
) -> int:
    """One round of :func:`in_workers`: its items dealt out, the children forked, the first share done here."""
    shares = [items[i::workers] for i in range(max(1, workers))]
    sys.stdout.flush()
    sys.stderr.flush()
    frozen = gc.get_freeze_count() > 0  # a build may hold its loaded site frozen already (hooks/site_hooks.py)
    gc.freeze()  # the children do not write to the parent's objects' pages just by collecting them
    children, mine = [], list(shares[0])
    try:
        for share in shares[1:]:
            if not share:
                continue
            try:
                pid = os.fork()
            except OSError:  # no process to be had: this share is done here
                mine += share
                continue
            if pid == 0:  # the child: its share, then out without running the parent's exit handlers
                code = 1
                try:
                    child_setup()
                    work(share)
                    code = 0
                finally:
                    os._exit(code)
            children.append(pid)
    finally:
        if not frozen:
            gc.unfreeze()
    try:
        work(mine)
    finally:  # the children end before this call does, even when the parent's share fails
        ok = 0
        for pid in children:
            _, status = os.waitpid(pid, 0)
            ok += os.waitstatus_to_exitcode(status) == 0
    return ok
