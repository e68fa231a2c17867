"""Fixtures for the runner tests: run coroutines on a loop with microsecond timers (the test server's)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from bench.testing.testserver import precise_event_loop

T = TypeVar("T")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=precise_event_loop) as runner:
        return runner.run(coro)


@pytest.fixture
def arun() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run a coroutine to completion on a fresh select() loop (the test server's timers are then precise)."""
    return _run
