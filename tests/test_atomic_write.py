"""``bench.atomic_write``: the whole new text or the old file, never half; an exclusive write never overwrites."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.atomic_write import new_file_mode, write_atomic


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


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_written_file_gets_the_permissions_open_gives_a_new_file(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "r.json", "x")
        write_atomic(tmp_path / "e.json", "x", exclusive=True)
        with open(tmp_path / "plain.json", "w", encoding="utf-8") as fh:
            fh.write("x")
        found = new_file_mode(tmp_path)
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"r.json": expected, "e.json": expected, "plain.json": expected}  # and nothing else left
    assert found == expected
