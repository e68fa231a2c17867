"""The event loop every measuring process runs its client on: one definition.

``uvloop`` (libuv under asyncio's API) where it is installed, else asyncio's own loop. uvloop comes with the GPU
extra (SGLang depends on it), so on a GPU node the client gets it without a package of its own. Profiled on the
H200 host, most of the client's cost per streamed chunk at high rates is the event loop's own work (selector,
callback handles, the socket read), not benchbook's parsing; that work is what uvloop does in C.

``$BENCHBOOK_EVENT_LOOP`` chooses: ``auto`` (default: uvloop when importable), ``uvloop`` (required: an error
names what is missing), ``asyncio``. Which one ran is stated in each level's ``client_load.event_loop``.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from bench.redact import redact_text

__all__ = ["EVENT_LOOP_ENV", "EventLoopError", "chosen_loop", "run", "running_loop", "watch_readable"]

EVENT_LOOP_ENV = "BENCHBOOK_EVENT_LOOP"
_CHOICES = ("auto", "uvloop", "asyncio")
T = TypeVar("T")


class EventLoopError(ValueError):
    """The event loop asked for by ``$BENCHBOOK_EVENT_LOOP`` cannot be had."""


def chosen_loop(env: dict[str, str] | None = None) -> str:
    """``"uvloop"`` or ``"asyncio"``: the loop :func:`run` starts under this environment."""
    raw = (os.environ if env is None else env).get(EVENT_LOOP_ENV, "auto").strip().lower() or "auto"
    if raw not in _CHOICES:
        shown = redact_text(raw)  # what a user typed into the environment reaches the terminal redacted
        raise EventLoopError(f"${EVENT_LOOP_ENV}: expected one of {', '.join(_CHOICES)}, got {shown!r}")
    if raw == "asyncio":
        return "asyncio"
    try:
        importlib.import_module("uvloop")
    except ImportError as exc:
        if raw == "uvloop":
            raise EventLoopError(f"${EVENT_LOOP_ENV}=uvloop, but uvloop cannot be imported here ({exc})") from None
        return "asyncio"
    return "uvloop"


def _factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if name == "asyncio":
        return None
    uvloop = importlib.import_module("uvloop")
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], *, loop: str | None = None) -> T:
    """``asyncio.run(main)`` on the chosen loop (``loop``: a name :func:`chosen_loop` returned, default: choose now)."""
    with asyncio.Runner(loop_factory=_factory(loop or chosen_loop())) as runner:
        return runner.run(main)


def running_loop() -> str:
    """``"uvloop"`` or ``"asyncio"``: the loop the calling coroutine runs on."""
    return "uvloop" if type(asyncio.get_running_loop()).__module__.partition(".")[0] == "uvloop" else "asyncio"


def watch_readable(loop: asyncio.AbstractEventLoop, fd: int, callback: Callable[[], object]) -> None:
    """``loop.add_reader(fd, callback)`` that leaves the descriptor's blocking mode as it was. uvloop's (libuv's
    poll handle) makes it non-blocking, and a ``multiprocessing`` connection read on a non-blocking socket fails
    with ``BlockingIOError`` as soon as a message arrives in more than one piece."""
    blocking = os.get_blocking(fd)
    loop.add_reader(fd, callback)
    if os.get_blocking(fd) != blocking:
        os.set_blocking(fd, blocking)
