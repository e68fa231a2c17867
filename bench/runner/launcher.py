"""Starting and always stopping a serving engine.

The server runs in its own process group (``start_new_session``) with stdout and stderr going to a log
file, and with Linux's parent-death signal set, so that a harness killed outright (SIGKILL, a timed-out
test) still takes its server down. :meth:`ServerProcess.wait_ready` polls a readiness probe while watching
the process: a server that exits before it is ready raises :class:`ServerExited` carrying the log's tail.
:meth:`ServerProcess.stop` sends SIGTERM to the whole group, then SIGKILL, so no engine worker outlives the
run; it is called on normal end, on error and on Ctrl-C (use the instance as a context manager, and
:func:`interrupts_raise` so that SIGTERM to the harness unwinds the same way as Ctrl-C).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType

from bench.redact import redact_text

_PR_SET_PDEATHSIG = 1
try:  # loaded here, in the parent: the child between fork and exec only makes the call
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:
    _LIBC = None


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when the harness dies, even by SIGKILL (a timed-out
    test, an OOM kill, a node's scheduler), so no engine outlives the run that launched it."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


__all__ = [
    "LaunchError",
    "ReadyTimeout",
    "ServerExited",
    "ServerProcess",
    "crash_cause",
    "deferred_signals",
    "free_port",
    "group_alive",
    "group_members",
    "interrupts_raise",
    "log_tail",
]

# Lines worth keeping even when they are not in the last lines of the log (the cause of a crash).
CRASH_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"GGML_ASSERT|GGML_ABORT"),
    re.compile(r"\b(Assertion|assert(ion)? failed)\b", re.IGNORECASE),
    re.compile(r"(Segmentation fault|core dumped|terminate called|Aborted)"),
    re.compile(r"\b(Traceback \(most recent call last\)|CUDA error|out of memory|RuntimeError)\b"),
)


def crash_cause(log_excerpt: str | None) -> str | None:
    """The first line of a log excerpt that states a crash's cause (an assertion, an abort, a CUDA error)."""
    for line in (log_excerpt or "").splitlines():
        if any(p.search(line) for p in CRASH_PATTERNS[:2]) or "CUDA error" in line or "out of memory" in line:
            return line.strip()[:300]
    return None


class LaunchError(Exception):
    """The server could not be started or did not become ready. ``log_excerpt`` holds the log's tail."""

    def __init__(self, message: str, log_excerpt: str | None = None) -> None:
        super().__init__(message)
        self.log_excerpt = log_excerpt


class ServerExited(LaunchError):
    pass


class ReadyTimeout(LaunchError):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, lines: int = 40, *, max_chars: int = 8000) -> str:
    """The last ``lines`` lines of a log, preceded by any earlier line matching a crash pattern, secrets hidden
    (a server may print its command line, an API key or a token): the lines are redacted before they are cut
    to ``max_chars``, and a cut keeps whole lines, so no part of a secret survives."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    all_lines = text.splitlines()
    tail = redact_text("\n".join(all_lines[-lines:])).split("\n")
    head_part = all_lines[: max(0, len(all_lines) - lines)]
    crash = [redact_text(ln) for ln in head_part if any(p.search(ln) for p in CRASH_PATTERNS)][-5:]
    out = [*crash, "[...]", *tail] if crash else tail
    joined = "\n".join(out)
    if len(joined) > max_chars:
        keep = "\n".join(ln[: max_chars // 10] for ln in crash)
        rest = joined[-(max_chars - len(keep) - 7) :]
        rest = rest.split("\n", 1)[1] if "\n" in rest else ""  # drop the line the cut went through
        joined = (keep + "\n[...]\n" if keep else "[...]\n") + rest
    return joined


class ServerProcess:
    """One launched server. Use as a context manager: the process group is always stopped on exit."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.command = list(command)
        self.log_path = log_path
        base = dict(os.environ if env is None else env)
        base.update(extra_env or {})
        self._env = base
        self._cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self.pgid: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> ServerProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:  # (no signal mask here: the child would inherit it)
            try:
                self._proc = subprocess.Popen(
                    self.command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self._env,
                    cwd=self._cwd,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            except OSError as exc:
                raise LaunchError(f"cannot start {self.command[0]!r}: {exc}") from None
        self.pgid = self._proc.pid  # a new session: the group id is the leader's pid
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def returncode(self) -> int | None:
        """None while running; the exit status (negative: killed by that signal) once it has exited."""
        return self._proc.poll() if self._proc is not None else None

    def is_alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_description(self) -> str:
        code = self.returncode()
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"

    def tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)

    def wait_ready(
        self,
        probe: Callable[[], bool],
        *,
        timeout_s: float,
        interval_s: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> float:
        """Poll ``probe`` until it returns True; return the seconds it took.

        Raises ServerExited if the process ends first and ReadyTimeout after ``timeout_s``.
        """
        start = clock()
        while True:
            if not self.is_alive():
                raise ServerExited(
                    f"server {self.exit_description()} before it was ready (log: {self.log_path})", self.tail()
                )
            if probe():
                return clock() - start
            if clock() - start > timeout_s:
                raise ReadyTimeout(f"server not ready after {timeout_s:.0f} s (log: {self.log_path})", self.tail())
            time.sleep(interval_s)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the whole process group, wait up to ``grace_s``, then SIGKILL it. Idempotent.

        SIGINT and SIGTERM to the harness are held back until the group is gone (a second Ctrl-C while a slow
        server shuts down must not leave it running); they are delivered when ``stop`` returns."""
        if self._proc is None or self.pgid is None:
            return
        with deferred_signals():
            self._stop(grace_s)

    def _stop(self, grace_s: float) -> None:
        assert self._proc is not None and self.pgid is not None
        deadline = time.monotonic() + grace_s
        _signal_group(self.pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=grace_s)
        # the leader may be gone while workers of its group live on: always finish the group off
        while group_alive(self.pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if group_alive(self.pgid):
            _signal_group(self.pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=grace_s)
        deadline = time.monotonic() + grace_s  # SIGKILL is not instant: return once the group is really gone
        while group_alive(self.pgid) and time.monotonic() < deadline:
            time.sleep(0.02)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[int] | None:
    """Pids of the live (non-zombie) processes of a group, from /proc; None where /proc is not available."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry.name))
    return out


def group_alive(pgid: int) -> bool:
    """True while any live process of the group exists (zombies awaiting their reaper do not count)."""
    members = group_members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are held back; they are handled, as they would have been, when it ends.
    Use around work that must not be cut in half: stopping a server group, replacing a record file.

    (Python-level handlers, not a signal mask: a mask is per thread, and a signal sent to the process can land on
    any thread that does not block it, e.g. an executor thread; Python runs its handlers in the main thread.)"""
    held: list[int] = []

    def _hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    try:
        old = {sig: signal.signal(sig, _hold) for sig in _DEFERRED}
    except ValueError:  # not the main thread: handlers run in the main thread anyway
        yield
        return
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(held):  # each signal once, in arrival order
            handler = old[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


@contextlib.contextmanager
def interrupts_raise() -> Iterator[None]:
    """Within the block, SIGTERM (and SIGINT) raise KeyboardInterrupt so cleanup runs as on Ctrl-C."""

    def _raise(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"received {signal.Signals(signum).name}")

    try:
        old_term = signal.signal(signal.SIGTERM, _raise)
        old_int = signal.signal(signal.SIGINT, _raise)
    except ValueError:  # not the main thread: leave handlers alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
