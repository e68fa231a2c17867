"""Work split over forked processes (bench/site/_workers.py): every item done once, by a child or here; a child that
fails costs its results, not the call; the worker count read from the environment, a bad one refused."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from bench.site import WORKERS_ENV, WorkersError, build_workers, in_workers


def _mark(folder: Path) -> Callable[[Sequence[int]], None]:
    def work(items: Sequence[int]) -> None:
        for i in items:
            (folder / f"{i}.done").write_text(str(os.getpid()), encoding="utf-8")

    return work


def _done(folder: Path) -> dict[int, str]:
    return {int(p.stem): p.read_text(encoding="utf-8") for p in folder.glob("*.done")}


def test_every_item_is_done_once_across_processes(tmp_path: Path) -> None:
    def slow(items: Sequence[int]) -> None:
        time.sleep(0.01)  # long enough for every process to take some
        _mark(tmp_path)(items)

    ok = in_workers(list(range(30)), slow, 3, child_setup=lambda: None)
    assert ok == 2
    done = _done(tmp_path)
    assert sorted(done) == list(range(30))
    pids = set(done.values())
    assert len(pids) == 3 and str(os.getpid()) in pids  # two children and this process


def test_a_process_meeting_slow_items_takes_fewer(tmp_path: Path) -> None:
    # the items go out one chunk at a time from one queue: while this process works on one slow item, the child
    # takes the quick ones (dealt out in turn, this process would have taken half of them)
    me = os.getpid()

    def work(items: Sequence[int]) -> None:
        if os.getpid() == me:
            time.sleep(0.5)
        _mark(tmp_path)(items)

    assert in_workers(list(range(40)), work, 2, child_setup=lambda: None) == 1
    done = _done(tmp_path)
    assert sorted(done) == list(range(40))
    assert sum(pid == str(me) for pid in done.values()) <= 3  # about 0.5 s of its own: one item, maybe two


def test_chunks_keep_their_items_together(tmp_path: Path) -> None:
    calls: list[list[int]] = []

    def work(items: Sequence[int]) -> None:
        (tmp_path / f"{items[0]}.chunk").write_text(" ".join(map(str, items)), encoding="utf-8")
        calls.append(list(items))

    in_workers(list(range(23)), work, 2, child_setup=lambda: None, chunk=5)
    chunks = sorted([int(x) for x in p.read_text(encoding="utf-8").split()] for p in tmp_path.glob("*.chunk"))
    assert chunks == [list(range(s, min(s + 5, 23))) for s in range(0, 23, 5)]


def test_a_child_takes_at_most_per_child_items_and_a_new_child_takes_the_next(tmp_path: Path) -> None:
    """``per_child``: a child ends after that many items, and a new one takes its place (what a child copies or makes
    is given back when it ends)."""
    me = str(os.getpid())

    def slow(items: Sequence[int]) -> None:
        time.sleep(0.02)
        _mark(tmp_path)(items)

    ok = in_workers(list(range(40)), slow, 3, child_setup=lambda: None, per_child=4)
    done = _done(tmp_path)
    assert sorted(done) == list(range(40))
    children: dict[str, list[int]] = {}
    for i, pid in sorted(done.items()):
        if pid != me:
            children.setdefault(pid, []).append(i)
    assert all(len(mine) <= 4 for mine in children.values())
    assert len(children) >= 4  # more children than the two that run at once: each was replaced
    assert ok >= len(children)


def test_a_child_that_fails_before_working_loses_nothing(tmp_path: Path) -> None:
    def setup() -> None:
        raise RuntimeError("a child that breaks before working")

    ok = in_workers(list(range(10)), _mark(tmp_path), 2, child_setup=setup)
    assert ok == 0
    assert _done(tmp_path) == {i: str(os.getpid()) for i in range(10)}  # this process took every item


def test_a_child_that_fails_loses_only_what_it_was_working_on(tmp_path: Path) -> None:
    me = os.getpid()

    def work(items: Sequence[int]) -> None:
        if os.getpid() != me and 7 in items:
            raise RuntimeError("a child fails on item 7")
        time.sleep(0.01)
        _mark(tmp_path)(items)

    in_workers(list(range(20)), work, 2, child_setup=lambda: None)
    assert sorted(_done(tmp_path)) in (list(range(20)), [i for i in range(20) if i != 7])


def test_one_worker_runs_everything_here(tmp_path: Path) -> None:
    assert in_workers([1, 2], _mark(tmp_path), 1, child_setup=lambda: None) == 0
    assert {p.read_text(encoding="utf-8") for p in tmp_path.glob("*.done")} == {str(os.getpid())}


def test_worker_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert build_workers() == len(os.sched_getaffinity(0))
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert build_workers() == 3
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(WorkersError, match=r"BENCHBOOK_BUILD_WORKERS: expected a whole number"):
            build_workers()


def test_a_process_over_its_memory_bound_forks_nothing(tmp_path: Path) -> None:
    from bench.site._workers import resident_bytes

    assert resident_bytes() > 10 * 2**20  # a Python process with pytest loaded
    ok = in_workers(list(range(6)), _mark(tmp_path), 3, child_setup=lambda: None, max_resident=2**20)
    assert ok == 0
    assert {p.read_text(encoding="utf-8") for p in tmp_path.glob("*.done")} == {str(os.getpid())}
    assert len(list(tmp_path.glob("*.done"))) == 6


def test_a_bad_worker_count_is_shown_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "hf_" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9"
    monkeypatch.setenv(WORKERS_ENV, token)
    with pytest.raises(WorkersError) as caught:
        build_workers()
    assert token not in str(caught.value) and "BENCHBOOK_BUILD_WORKERS" in str(caught.value)


def test_the_children_have_ended_when_the_parents_work_fails(tmp_path: Path) -> None:
    parent = os.getpid()
    mark = _mark(tmp_path)

    def work(items: Sequence[int]) -> None:
        if os.getpid() == parent:
            time.sleep(0.1)  # the child has taken its first item
            raise RuntimeError("the parent's work fails")
        time.sleep(0.3)  # each of the child's items takes a while
        mark(items)
        (tmp_path / f"{items[0]}.ended").write_text(str(time.monotonic()), encoding="utf-8")

    with pytest.raises(RuntimeError, match="work fails"):
        in_workers(list(range(60)), work, 2, child_setup=lambda: None)
    raised = time.monotonic()
    done = _done(tmp_path)
    assert done and len(done) <= 2  # the queue was emptied: the child ended after its current item
    assert all(float(p.read_text(encoding="utf-8")) <= raised for p in tmp_path.glob("*.ended"))  # waited for


def test_done_hears_of_every_chunk_once_here_after_its_work_and_while_children_still_work(tmp_path: Path) -> None:
    """``done``: this process is told of each chunk that ended well, its own and the children's (through a pipe),
    each once, after the chunk's results are there, and of the children's while they still work (not all at the
    end), with ``per_child`` replacing children on the way."""
    me = os.getpid()
    heard: list[tuple[list[int], float]] = []

    def slow(items: Sequence[int]) -> None:
        time.sleep(0.03)
        for i in items:
            (tmp_path / f"{i}.done").write_text(f"{os.getpid()} {time.monotonic()}", encoding="utf-8")

    def done(items: Sequence[int]) -> None:
        assert os.getpid() == me
        assert all((tmp_path / f"{i}.done").is_file() for i in items)  # told after the chunk's work ended
        heard.append((list(items), time.monotonic()))

    in_workers(list(range(60)), slow, 3, child_setup=lambda: None, chunk=3, per_child=9, done=done)
    told = sorted(i for items, _ in heard for i in items)
    assert told == list(range(60))  # every item once
    assert all(len(items) == 3 for items, _ in heard)  # whole chunks
    ended = {int(p.stem): p.read_text(encoding="utf-8").split() for p in tmp_path.glob("*.done")}
    children_end = max(float(t) for pid, t in ended.values() if int(pid) != me)
    of_children = [when for items, when in heard if int(ended[items[0]][0]) != me]
    assert of_children and min(of_children) < children_end  # heard of a child's chunk before the children ended


def test_done_is_not_told_of_a_chunk_whose_child_failed(tmp_path: Path) -> None:
    me = os.getpid()
    heard: list[int] = []

    def work(items: Sequence[int]) -> None:
        time.sleep(0.01)
        if 7 in items and os.getpid() != me:
            raise RuntimeError("a child fails on item 7")
        _mark(tmp_path)(items)

    in_workers(list(range(30)), work, 2, child_setup=lambda: None, done=lambda items: heard.extend(items))
    assert sorted(heard) == sorted(_done(tmp_path))  # exactly the items whose work ended well, each once
    assert len(heard) == len(set(heard)) and len(heard) >= 29


def test_done_without_a_fork_hears_of_all_items_once(tmp_path: Path) -> None:
    heard: list[list[int]] = []
    in_workers(
        list(range(5)), _mark(tmp_path), 1, child_setup=lambda: None, done=lambda items: heard.append(list(items))
    )
    assert heard == [list(range(5))] and sorted(_done(tmp_path)) == list(range(5))


def test_listening_this_process_does_no_chunk_and_hears_of_every_one(tmp_path: Path) -> None:
    me = os.getpid()
    heard: list[int] = []
    first_heard: list[float] = []

    def slow(items: Sequence[int]) -> None:
        time.sleep(0.02)
        _mark(tmp_path)(items)

    def done(items: Sequence[int]) -> None:
        first_heard.append(time.monotonic())
        heard.extend(items)

    ok = in_workers(list(range(40)), slow, 2, child_setup=lambda: None, chunk=4, done=done, listen=True)
    ended = time.monotonic()
    assert ok == 2  # two children: as many as workers, this process only listens
    done_by = _done(tmp_path)
    assert sorted(done_by) == list(range(40)) and sorted(heard) == list(range(40))
    assert str(me) not in set(done_by.values())
    assert min(first_heard) < ended - 0.05  # heard of chunks as they ended, not all once the children had


def test_listening_this_process_does_what_no_child_took(tmp_path: Path) -> None:
    """Children that end before taking any chunk leave the queue to this process, which then does it all itself."""
    me = os.getpid()
    heard: list[int] = []

    def fail() -> None:
        raise RuntimeError("a child that cannot start")

    ok = in_workers(list(range(12)), _mark(tmp_path), 2, child_setup=fail, chunk=4, done=heard.extend, listen=True)
    assert ok == 0
    assert _done(tmp_path) == {i: str(me) for i in range(12)} and sorted(heard) == list(range(12))


def test_listening_needs_done_and_no_per_child() -> None:
    with pytest.raises(ValueError, match="listen"):
        in_workers([1, 2], lambda items: None, 2, child_setup=lambda: None, listen=True)
    with pytest.raises(ValueError, match="listen"):
        in_workers([1, 2], lambda items: None, 2, child_setup=lambda: None, listen=True, done=print, per_child=1)
