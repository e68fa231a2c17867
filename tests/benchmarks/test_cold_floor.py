"""The cold-build floor (benchmarks/cold_floor.py) times the must-do work in process: every reference a ``bench``
module holds to a timed function is swapped for the timed one and put back, a timed call inside another counts once,
and a small run of synthetic records times each kind of work and writes the rows the Performance page reads."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cold_floor  # noqa: E402

import bench.compare._interval as interval  # noqa: E402
import bench.dataframe as dataframe  # noqa: E402
import bench.record.load as load  # noqa: E402
import bench.site._site_records as site_records  # noqa: E402


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_timed_call_inside_another_counts_once() -> None:
    clock = cold_floor.Clock()
    inner = clock.timed("redact", lambda: _busy(0.05))

    def outer_work() -> None:
        _busy(0.05)
        inner()

    clock.timed("validate", outer_work)()
    inner()
    assert clock.spent["validate"] == pytest.approx(0.1, abs=0.03)  # its own time and the inner call's
    assert clock.spent["redact"] == pytest.approx(0.05, abs=0.03)  # only the call made on its own


def test_every_reference_is_timed_then_put_back() -> None:
    before = (load.load_record, site_records.load_record, interval.level_intervals_many, dataframe.level_intervals_many)
    clock = cold_floor.Clock()
    with cold_floor.timing(clock):
        assert site_records.load_record is load.load_record is not before[0]  # the names modules imported too
        assert dataframe.level_intervals_many is interval.level_intervals_many is not before[2]
    after = (load.load_record, site_records.load_record, interval.level_intervals_many, dataframe.level_intervals_many)
    assert after == before


def test_a_small_run_times_each_kind_of_work(tmp_path: Path) -> None:
    row = cold_floor.measure(40, tmp_path, plain=False)
    assert row["records"] == 40 and row["pages"] > 40
    for label in cold_floor.LABELS:
        assert row[label] > 0, label
    assert row["mandated"] == pytest.approx(sum(row[label] for label in cold_floor.LABELS))
    assert row["floor"] == pytest.approx(row["mandated"] / row["cores"])
    assert row["mandated"] < row["total"]
    out = tmp_path / "floor.json"
    cold_floor.write_result(out, [row], cold_floor.datetime.now(cold_floor.UTC), {"commit": "abc", "dirty": False})
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["kind"] == "benchbook-cold-floor" and written["rows"][0]["records"] == 40
    assert "| 40 | " in cold_floor.table([row])
