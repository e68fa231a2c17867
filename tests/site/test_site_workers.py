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


def test_every_item_is_done_once_across_processes(tmp_path: Path) -> None:
    ok = in_workers(list(range(30)), _mark(tmp_path), 3, child_setup=lambda: None)
    assert ok == 2
    done = {int(p.stem): p.read_text(encoding="utf-8") for p in tmp_path.glob("*.done")}
    assert sorted(done) == list(range(30))
    pids = set(done.values())
    assert len(pids) == 3 and str(os.getpid()) in pids  # two children and this process
    assert {done[i] for i in range(0, 30, 3)} == {str(os.getpid())}  # the first share stays here


def test_a_child_takes_at_most_per_child_items_and_a_new_child_takes_the_next(tmp_path: Path) -> None:
    """``per_child``: rounds of ``workers`` × ``per_child`` items, each share of a round in a child of its own (what a
    child copies or makes is given back when it ends), the first share of each round here."""
    ok = in_workers(list(range(11)), _mark(tmp_path), 3, child_setup=lambda: None, per_child=2)
    done = {int(p.stem): p.read_text(encoding="utf-8") for p in tmp_path.glob("*.done")}
    assert sorted(done) == list(range(11))
    me = str(os.getpid())
    assert sorted(i for i, pid in done.items() if pid == me) == [0, 3, 6, 9]  # rounds 0-5 and 6-10, dealt in turn
    children: dict[str, list[int]] = {}
    for i, pid in sorted(done.items()):
        if pid != me:
            children.setdefault(pid, []).append(i)
    assert sorted(children.values()) == [[1, 4], [2, 5], [7, 10], [8]]
    assert ok == 4


def test_a_failing_child_loses_only_its_share(tmp_path: Path) -> None:
    def setup() -> None:
        raise RuntimeError("a child that breaks before working")

    ok = in_workers(list(range(10)), _mark(tmp_path), 2, child_setup=setup)
    assert ok == 0
    assert sorted(int(p.stem) for p in tmp_path.glob("*.done")) == list(range(0, 10, 2))


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


def test_the_children_have_ended_when_the_parents_share_fails(tmp_path: Path) -> None:
    parent = os.getpid()
    mark = _mark(tmp_path)

    def work(items: Sequence[int]) -> None:
        if os.getpid() == parent:
            raise RuntimeError("the parent's share fails at once")
        time.sleep(0.3)  # the child's share takes a while
        mark(items)

    with pytest.raises(RuntimeError, match="fails at once"):
        in_workers(list(range(6)), work, 2, child_setup=lambda: None)
    assert sorted(int(p.stem) for p in tmp_path.glob("*.done")) == [1, 3, 5]  # waited for, not left running
