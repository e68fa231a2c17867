"""A warm build keys the record files that did not change without reading them (``bench.site._file_keys``), and
reads every file that did: rewritten in place (even with its old modification time put back), replaced by a rename,
or when the keys left by the last build are damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from site_helpers import DOCS

from bench.site import SiteCache, _file_keys, load_site
from bench.site import _cache as cache_module
from bench.testing.spy import note_paths


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record files the keying read (by name), in another process's memory each build (none carried over)."""
    seen = note_paths(monkeypatch, _file_keys, "read_text_file")
    cache_module._STATE.clear()
    yield seen
    cache_module._STATE.clear()


def _build(records: Path, cache: Path, reads: list[str]) -> tuple[list[str], dict[str, str | None]]:
    reads.clear()
    cache_module._STATE.clear()  # a new process: the keys come from the cache folder
    site = load_site(records, DOCS, cache=SiteCache(cache, version="v1"))
    assert not site.errors
    return sorted(reads), {lr.record.id: lr.record.description for lr in site.records}


def _rewrite(path: Path, description: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["description"] = description
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def test_unchanged_files_are_keyed_unread_and_changed_ones_are_read(
    records: Path, tmp_path: Path, reads: list[str]
) -> None:
    cache = tmp_path / "cache"
    files = sorted(records.rglob("*.json"))
    first, shown = _build(records, cache, reads)
    assert first == sorted(p.name for p in files) and len(files) > 10
    assert _build(records, cache, reads) == ([], shown)  # nothing changed: nothing read

    # rewritten in place, the same length, its old modification time put back: its change time still moved
    edited = files[0]
    st = edited.stat()
    data = json.loads(edited.read_text(encoding="utf-8"))
    old = str(data.get("description"))
    _rewrite(edited, "X" * len(old) if data.get("description") else "x")
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    again, now = _build(records, cache, reads)
    assert again == [edited.name]
    rid = str(data["id"])
    assert now[rid] != shown[rid] and {k: v for k, v in now.items() if k != rid} == {
        k: v for k, v in shown.items() if k != rid
    }

    # replaced by a rename (a new inode), bytes and times otherwise alike
    replaced = files[1]
    tmp = replaced.with_name(".tmp")
    tmp.write_bytes(replaced.read_bytes())
    st = replaced.stat()
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, replaced)
    assert _build(records, cache, reads)[0] == [replaced.name]
    assert _build(records, cache, reads)[0] == []


def test_damaged_keys_read_every_file(records: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "cache"
    _, shown = _build(records, cache, reads)
    state = next(cache.rglob("record-file-keys.pickle"))
    state.write_bytes(b"\x80\x05not a pickle")
    assert _build(records, cache, reads) == (sorted(p.name for p in records.rglob("*.json")), shown)
