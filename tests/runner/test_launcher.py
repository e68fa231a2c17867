"""The launcher: own process group, readiness while watching the process, and no orphan ever survives."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bench.runner.launcher import (
    ReadyTimeout,
    ServerExited,
    ServerProcess,
    group_alive,
    log_tail,
)

# A "server" that starts a grandchild in its own group (like an engine's worker processes) and prints both pids.
FAMILY = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    if sys.argv[1:] == ["stubborn"]:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    child = subprocess.Popen([sys.executable, "-c", deaf])
    print("pids", child.pid, flush=True)
    time.sleep(120)
    """
)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def _grandchild(log: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "pids" in text:
            return int(text.split("pids")[1].split()[0])
        time.sleep(0.05)
    raise AssertionError(f"no pid line in {log}")


@pytest.mark.parametrize("mode", ["polite", "stubborn"])
def test_stop_kills_the_whole_group(tmp_path: Path, mode: str) -> None:
    log = tmp_path / "server.log"
    server = ServerProcess([sys.executable, "-c", FAMILY, mode], log_path=log).start()
    assert server.pgid == server.pid and server.pgid != os.getpgid(0)  # its own process group
    grandchild = _grandchild(log)
    assert os.getpgid(grandchild) == server.pgid
    t0 = time.monotonic()
    server.stop(grace_s=1.0)
    assert time.monotonic() - t0 < 10
    assert not group_alive(server.pgid)
    assert not _pid_alive(grandchild)  # ignored SIGTERM, got SIGKILL
    assert not server.is_alive()
    server.stop()  # idempotent


def test_context_manager_stops_on_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with (
        pytest.raises(RuntimeError, match="boom"),
        ServerProcess([sys.executable, "-c", FAMILY, "polite"], log_path=log) as s,
    ):
        pgid = s.pgid
        _grandchild(log)
        raise RuntimeError("boom")
    assert pgid is not None and not group_alive(pgid)


def test_exit_before_ready_carries_log_tail(tmp_path: Path) -> None:
    code = "import sys; print('loading model'); print('GGML_ASSERT(x) failed', file=sys.stderr); sys.exit(3)"
    server = ServerProcess([sys.executable, "-c", code], log_path=tmp_path / "s.log")
    with server as s, pytest.raises(ServerExited) as info:
        s.wait_ready(lambda: False, timeout_s=30, interval_s=0.05)
    assert "exited with status 3" in str(info.value)
    assert info.value.log_excerpt is not None and "GGML_ASSERT" in info.value.log_excerpt


def test_ready_probe_and_timeout(tmp_path: Path) -> None:
    with ServerProcess([sys.executable, "-c", "import time; time.sleep(60)"], log_path=tmp_path / "s.log") as s:
        calls = []

        def probe() -> bool:
            calls.append(1)
            return len(calls) >= 3

        assert s.wait_ready(probe, timeout_s=30, interval_s=0.01) >= 0
        assert len(calls) == 3
        with pytest.raises(ReadyTimeout):
            s.wait_ready(lambda: False, timeout_s=0.2, interval_s=0.05)
        pgid = s.pgid
    assert pgid is not None and not group_alive(pgid)


def test_missing_executable_is_a_launch_error(tmp_path: Path) -> None:
    from bench.runner.launcher import LaunchError

    with pytest.raises(LaunchError, match="cannot start"):
        ServerProcess([str(tmp_path / "nope")], log_path=tmp_path / "s.log").start()


def test_log_tail_keeps_crash_line_outside_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    lines = ["start", '/path/server-context.cpp:508: GGML_ASSERT(add_ok && "batch must be large enough") failed']
    lines += [f"backtrace frame {i}" for i in range(100)]
    log.write_text("\n".join(lines) + "\n")
    tail = log_tail(log, lines=10)
    assert "GGML_ASSERT(add_ok" in tail
    assert "backtrace frame 99" in tail and "backtrace frame 50" not in tail
    assert log_tail(tmp_path / "missing.log") == ""


def test_exit_description_names_the_signal(tmp_path: Path) -> None:
    with ServerProcess([sys.executable, "-c", "import time; time.sleep(60)"], log_path=tmp_path / "s.log") as s:
        assert s.exit_description() == "still running"
        os.killpg(s.pgid or 0, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while s.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert s.exit_description() == "killed by signal SIGKILL"


def test_crash_cause_picks_the_assertion_line() -> None:
    from bench.runner.launcher import crash_cause

    log = 'slot 1 | processing\nserver.cpp:508: GGML_ASSERT(add_ok && "batch") failed\n[New LWP 1]\n#0 abort ()\n'
    assert crash_cause(log) == 'server.cpp:508: GGML_ASSERT(add_ok && "batch") failed'
    assert crash_cause("all fine\n") is None and crash_cause(None) is None


def test_a_server_dies_with_a_harness_killed_outright(tmp_path: Path) -> None:
    """SIGKILL leaves the harness no chance to stop its server: the parent-death signal still takes it down."""
    import contextlib
    import subprocess

    pid_file = tmp_path / "server.pid"
    harness = textwrap.dedent(
        f"""
        import pathlib, time
        from bench.runner.launcher import ServerProcess
        p = ServerProcess(["sleep", "300"], log_path=pathlib.Path({str(tmp_path / "s.log")!r})).start()
        pathlib.Path({str(pid_file)!r}).write_text(str(p.pid))
        time.sleep(300)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", harness])
    deadline = time.time() + 30
    while not pid_file.exists() and time.time() < deadline:
        time.sleep(0.05)
    server_pid = int(pid_file.read_text())
    os.kill(server_pid, 0)  # running
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server_pid, os.WNOHANG)
        time.sleep(0.05)
    os.kill(server_pid, signal.SIGKILL)
    raise AssertionError(f"server {server_pid} outlived its harness")
