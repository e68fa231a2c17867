"""What one build leaves for the next in a long-lived process (bench/site/_between_builds.py): nothing while off,
the last build's values while on, a value no build asked for again dropped after one build, everything forgotten
when turned off."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.site._between_builds import Carried, keep_loaded_records


@pytest.fixture
def serving() -> Iterator[None]:
    keep_loaded_records()
    try:
        yield
    finally:
        keep_loaded_records(False)


def test_off_nothing_is_carried() -> None:
    store: Carried[str, int] = Carried()
    store.put("a", 1)
    store.turn()
    assert store.get("a") is None and "a" not in store


def test_a_value_is_found_by_the_next_build_only(serving: None) -> None:
    store: Carried[str, list[int]] = Carried()
    store.turn()  # build 1
    assert store.get("a") is None
    store.put("a", [])  # an empty value is a value
    store.put("b", [2])
    store.turn()  # build 2 finds both, asks for a only
    assert "a" in store and "b" in store
    assert store.get("a") == []
    store.turn()  # build 3: a was taken by build 2, so it is carried; b was not
    assert store.get("a") == [] and store.get("b") is None and "b" not in store


def test_turning_off_forgets_every_store() -> None:
    keep_loaded_records()
    one: Carried[str, int] = Carried()
    two: Carried[int, str] = Carried()
    one.put("x", 1)
    two.put(1, "y")
    one.turn()
    two.turn()
    keep_loaded_records(False)
    keep_loaded_records()
    try:
        assert one.get("x") is None and two.get(1) is None
    finally:
        keep_loaded_records(False)
