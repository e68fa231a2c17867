"""The client's event loop (bench.runner.event_loop): the choice, its errors, and a watch that keeps a
descriptor's blocking mode (the multiprocessing pipes of the sharded client)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.redact import REDACTED
from bench.runner import event_loop
from bench.runner.event_loop import EVENT_LOOP_ENV, EventLoopError, chosen_loop, run, running_loop, watch_readable

ROOT = Path(__file__).resolve().parents[2]


def _without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> Any:
        if name == "uvloop":
            raise ImportError("No module named 'uvloop'")
        return real(name, package)

    monkeypatch.setattr(event_loop.importlib, "import_module", fake)


def _with_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    class FakeUvloop:
        new_event_loop = staticmethod(asyncio.new_event_loop)

    def fake(name: str, package: str | None = None) -> Any:
        return FakeUvloop if name == "uvloop" else real(name, package)

    monkeypatch.setattr(event_loop.importlib, "import_module", fake)


def test_auto_takes_uvloop_where_it_imports_and_asyncio_where_not(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_uvloop(monkeypatch)
    assert chosen_loop({}) == "uvloop"
    assert chosen_loop({EVENT_LOOP_ENV: "auto"}) == "uvloop"
    assert chosen_loop({EVENT_LOOP_ENV: " Asyncio "}) == "asyncio"  # asked for: asyncio even where uvloop exists
    _without_uvloop(monkeypatch)
    assert chosen_loop({}) == "asyncio"
    assert chosen_loop({EVENT_LOOP_ENV: ""}) == "asyncio"


def test_required_uvloop_that_is_missing_and_an_unknown_value_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_uvloop(monkeypatch)
    with pytest.raises(EventLoopError, match=r"\$BENCHBOOK_EVENT_LOOP=uvloop, but uvloop cannot be imported"):
        chosen_loop({EVENT_LOOP_ENV: "uvloop"})
    expected = r"\$BENCHBOOK_EVENT_LOOP: expected one of auto, uvloop, asyncio, got 'tokio'"
    with pytest.raises(EventLoopError, match=expected):
        chosen_loop({EVENT_LOOP_ENV: "tokio"})
    planted = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345"  # a token pasted into the wrong variable
    with pytest.raises(EventLoopError) as info:
        chosen_loop({EVENT_LOOP_ENV: planted})
    assert planted not in str(info.value) and REDACTED in str(info.value)


def test_run_returns_the_result_on_the_loop_it_names() -> None:
    async def main() -> tuple[str, int]:
        await asyncio.sleep(0)
        return running_loop(), 42

    assert run(main(), loop="asyncio") == ("asyncio", 42)


class _NonBlockingReaderLoop(asyncio.SelectorEventLoop):
    """A loop whose add_reader makes the descriptor non-blocking, as uvloop's (libuv's poll handle) does."""

    def add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:
        os.set_blocking(fd, False)
        super().add_reader(fd, callback, *args)


def test_watch_readable_keeps_the_blocking_mode_and_still_wakes() -> None:
    a, b = socket.socketpair()
    loop = _NonBlockingReaderLoop()
    try:
        woke = asyncio.Event()
        assert os.get_blocking(a.fileno())
        loop.run_until_complete(asyncio.sleep(0))
        watch_readable(loop, a.fileno(), woke.set)
        assert os.get_blocking(a.fileno())  # a multiprocessing recv may wait for the rest of a message
        b.send(b"x")
        loop.run_until_complete(asyncio.wait_for(woke.wait(), 5))
        assert a.recv(1) == b"x"
        # the plain add_reader of the same loop would have left it non-blocking: the watch is what restores it
        loop.remove_reader(a.fileno())
        loop.add_reader(a.fileno(), woke.set)
        assert not os.get_blocking(a.fileno())
        loop.remove_reader(a.fileno())
    finally:
        loop.close()
        a.close()
        b.close()


def test_bench_run_with_a_bad_event_loop_stops_before_launching_and_writes_nothing(
    tmp_path: Path, tiny_prompts: Path
) -> None:
    prompts = tiny_prompts
    config = {
        "experiment": "loop-test", "variant": "one", "engine": "testserver", "prompt_set": str(prompts),
        "server_args": {"output-tokens": 4}, "levels": [1], "requests_per_level": 2, "min_requests": 1,
        "warmup": 0, "max_tokens": 4, "records_dir": str(tmp_path / "records"),
    }  # fmt: skip
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "run", str(tmp_path / "run.yaml"), "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
        env={**os.environ, EVENT_LOOP_ENV: "tokio"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error: $BENCHBOOK_EVENT_LOOP: expected one of auto, uvloop, asyncio, got 'tokio'" in proc.stderr
    assert not (tmp_path / "records").exists() or not any((tmp_path / "records").rglob("*.json"))
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())  # no server was launched
