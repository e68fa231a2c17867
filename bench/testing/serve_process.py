"""Stopping a ``mkdocs serve`` that a test or benchmark started (pure of MkDocs: it only signals the process).

``mkdocs serve`` builds into a temporary folder (``/tmp/mkdocs_*``) and removes it when it stops on Ctrl-C
(``KeyboardInterrupt``). SIGTERM ends Python before that cleanup runs: each 10,000-record serve run of
``benchmarks/site_build.py`` left 2 to 4 GB behind, until this machine's disk was nearly full. So the process is
interrupted as Ctrl-C would, and terminated, then killed, only if it does not end in time. It must be started with
:func:`interruptible`: a background job of a non-interactive shell (``nohup … &``, as CI may run) inherits SIGINT
ignored, and Python then installs no Ctrl-C handler, so the interrupt would do nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

__all__ = ["interruptible", "stop_serve"]


def interruptible() -> None:
    """``preexec_fn`` for the ``mkdocs serve`` process: SIGINT back to its default, so that Python in it raises
    ``KeyboardInterrupt`` on SIGINT even when this process runs with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_serve(
    proc: subprocess.Popen[bytes] | subprocess.Popen[str], grace_s: float = 20.0, group: bool = False
) -> None:
    """End ``proc`` (a ``mkdocs serve``) as Ctrl-C does; SIGTERM after ``grace_s`` seconds, SIGKILL after as many
    again. ``group``: signal its whole process group (a process started with ``start_new_session=True``)."""
    if proc.poll() is not None:
        return

    def send(sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        send(sig)
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue
