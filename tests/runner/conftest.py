"""Fixtures for the runner tests: run coroutines on a loop with microsecond timers (the test server's); a one-prompt
prompt set for ``bench run`` in a subprocess."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
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


@pytest.fixture
def tiny_prompts(tmp_path: Path) -> Path:
    """A prompt set of one chat prompt, as ``bench run`` reads it (JSONL: the header, then the prompt)."""
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        '{"name": "tiny", "description": "t", "license": "CC0-1.0", "source": "tests"}\n'
        '{"id": "a", "messages": [{"role": "user", "content": "Add two numbers."}]}\n',
        encoding="utf-8",
    )
    return prompts
