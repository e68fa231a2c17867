"""``bench.atomic_write``: the whole new text or the old file, never half; an exclusive write never overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.atomic_write import write_atomic


def test_writes_creates_the_folder_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b.txt"
    write_atomic(path, "one\n")
    assert path.read_text(encoding="utf-8") == "one\n"
    write_atomic(path, "two é\n")
    assert path.read_text(encoding="utf-8") == "two é\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["b.txt"]  # no temporary file left


def test_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_atomic(path, "first", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomic(path, "second", exclusive=True)
    assert path.read_text(encoding="utf-8") == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_atomic(path, "good")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "half written \ud800 never")  # a lone surrogate cannot be encoded: fails mid-write
    assert path.read_text(encoding="utf-8") == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_bytes_are_written_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "frame.parquet"
    data = b"PAR1\x00\xff\r\n"
    write_atomic(path, data)
    assert path.read_bytes() == data
