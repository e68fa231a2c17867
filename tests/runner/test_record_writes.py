"""The sweep's record file under failing writes and signals: the file always holds a whole, valid record that
matches what the sweep believes it wrote."""

from __future__ import annotations

import errno
import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import bench.runner.sweep as sweep
from bench.record.load import load_record
from bench.record.model import Level, ModelRef, Provenance, Record, Server, Status, Workload
from bench.record.store import dump_record, new_record_id
from bench.runner.launcher import deferred_signals, interrupts_raise
from bench.runner.sweep import RecordWriteError, create, with_level


def _record() -> Record:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return Record(
        id=new_record_id("v", now),
        experiment="writes",
        variant="v",
        created_at=now,
        provenance=Provenance(kind="measured"),
        server=Server(engine="benchbook-testserver"),
        model=ModelRef(name="m"),
        workload=Workload(prompt_set="p"),
        levels=[],
        status=Status(state="partial", message="running: no level finished yet"),
    )


def _full(*_: Any) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_failed_write_keeps_the_last_good_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = create(tmp_path, _record())
    state.write(with_level(state.record, Level(concurrency=1, requests_sent=1)))
    good = state.path.read_bytes()
    monkeypatch.setattr(sweep, "replace_record_file", _full)
    with pytest.raises(RecordWriteError) as err:
        state.write(with_level(state.record, Level(concurrency=2, requests_sent=1)))
    assert str(err.value) == (
        f"cannot write the record {state.path}: No space left on device; the file keeps its last good version "
        "(1 level(s), status partial)"
    )
    assert err.value.errno == errno.ENOSPC
    assert state.path.read_bytes() == good and [lv.concurrency for lv in state.record.levels] == [1]
    failed = state.fail("server gone")  # never raises: the error is kept
    assert state.finished and state.write_error is not None and state.path.read_bytes() == good
    assert state.unwritten is not None and state.unwritten.status.message == "server gone"
    assert failed.status.state == "partial" and load_record(state.path).record == state.record


def test_create_in_an_unusable_folder_is_a_write_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(RecordWriteError) as err:
        create(tmp_path / "file", _record())
    assert err.value.kept is None and "nothing was written" in str(err.value)


def test_a_signal_during_a_write_arrives_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of replacing the file: the file and the sweep's view agree when it is raised."""
    state = create(tmp_path, _record())
    real = sweep.replace_record_file

    def interrupted(path: Path, record: Record) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # arrives now, in the middle of the write
        real(path, record)

    monkeypatch.setattr(sweep, "replace_record_file", interrupted)
    new = with_level(state.record, Level(concurrency=1, requests_sent=1))
    with interrupts_raise(), pytest.raises(KeyboardInterrupt, match="received SIGINT"):
        state.write(new)
    assert state.record == new and state.path.read_text() == dump_record(new)


def test_deferred_signals_hold_and_then_deliver(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]  # delivered once, after the block
    finally:
        signal.signal(signal.SIGTERM, old)
