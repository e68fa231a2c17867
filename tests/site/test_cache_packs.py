"""Site-cache entries written in batches, one file (a pack) per batch: found as single entries are, never stale,
and a damaged pack costs its entries, never the build."""

from __future__ import annotations

import os
from pathlib import Path

from bench.site import SiteCache, load_site
from bench.site import _site_records as site_records
from bench.site._cache_packs import MAGIC, PACKS, PackIndex, write_pack


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_entries_of_a_pack_read_back_as_single_entries_do(tmp_path: Path) -> None:
    cache = SiteCache(tmp_path, version="v1")
    values = {f"{i:02x}" * 32: {"n": i, "text": "é" * i} for i in range(5)}
    cache.put_pickled_many("record", values, compressed=True)
    cache.put_pickled_many("record-whole", {"k" * 64: [1.5, 2.5]})
    assert [p.parent.name for p in _files(cache.folder)] == [PACKS, PACKS]  # one file per batch and kind
    for key, value in values.items():
        assert cache.has_pickled("record", key)
        assert cache.peek("record", key, compressed=True) == value
    assert cache.peek("record-whole", "k" * 64) == [1.5, 2.5]
    assert not cache.has_pickled("record", "k" * 64) and cache.peek("record", "k" * 64, compressed=True) is None
    hits = cache.get_pickled("record", "00" * 32, compressed=True), cache.get_pickled("record", "ff" * 32)
    assert hits == ({"n": 0, "text": ""}, None) and (cache.hits, cache.misses) == (1, 1)
    # a fresh cache object (another process, a later build) reads the same
    again = SiteCache(tmp_path, version="v1")
    assert all(again.peek("record", k, compressed=True) == v for k, v in values.items())


def test_an_entry_of_its_own_is_read_before_a_pack(tmp_path: Path) -> None:
    """An entry rewritten whole (``put_pickled``: a record's rows at a second confidence level) lies in a file of
    its own; a pack keeps the first version, which is not read any more."""
    cache = SiteCache(tmp_path, version="v1")
    key = "ab" * 32
    cache.put_pickled_many("record", {key: {"rows": ["0.95"]}}, compressed=True)
    cache.put_pickled("record", key, {"rows": ["0.95", "0.9"]}, compressed=True)
    assert cache.peek("record", key, compressed=True) == {"rows": ["0.95", "0.9"]}


def test_pages_remembered_together_are_found_one_by_one(tmp_path: Path) -> None:
    cache = SiteCache(tmp_path, version="v1")
    bodies = {f"{i}" * 64: {"content": f"<p>{i}</p>", "links": []} for i in range(3)}
    cache.remember_pages(bodies)
    cache.remember_pages({})  # nothing: no file
    assert len(_files(cache.folder)) == 1
    assert all(cache.has_page(k) and cache.page(k) == v for k, v in bodies.items())
    assert not cache.has_page("9" * 64) and cache.page("9" * 64) is None


def test_a_pack_written_after_the_folder_was_read_is_found(tmp_path: Path) -> None:
    """Another process's pack appears between two look-ups, within the folder's clock tick: the second look-up lists
    the folder again (its time stamp may not have moved)."""
    folder = tmp_path / PACKS
    index = PackIndex(folder)
    assert index.read("a") is None  # no folder yet
    write_pack(folder, {"a": b"first"})
    assert index.read("a") == b"first"
    write_pack(folder, {"b": b"second"})
    os.utime(folder, ns=(index._mtime or 0, index._mtime or 0))  # as if in the same tick as the first
    assert index.read("b") == b"second" and index.has("a") and not index.has("c")


def test_a_folder_settled_long_before_it_was_listed_is_not_listed_again(tmp_path: Path) -> None:
    folder = tmp_path / PACKS
    write_pack(folder, {"a": b"x"})
    old = 1_600_000_000 * 10**9
    os.utime(folder, ns=(old, old))
    index = PackIndex(folder)
    assert index.has("a")
    (folder / "later.pack").write_bytes(b"not read")  # the folder's time stamp put back: nothing changed, as seen
    os.utime(folder, ns=(old, old))
    listed = index._listed
    assert not index.has("zz") and index._listed == listed  # a miss on a settled folder: not listed again


def test_a_damaged_pack_holds_nothing_and_the_others_still_count(tmp_path: Path) -> None:
    cache = SiteCache(tmp_path, version="v1")
    cache.put_pickled_many("page", {"good" * 16: {"content": "ok"}})
    folder = cache.folder / "page" / PACKS
    (folder / "torn.pack").write_bytes(MAGIC + (10**6).to_bytes(8, "little") + b"\x80\x05")  # index cut short
    (folder / "foreign.pack").write_bytes(b"PK\x03\x04 not a pack at all")
    (folder / "garbage.pack").write_bytes(MAGIC + (3).to_bytes(8, "little") + b"abc")  # an index that is not one
    assert cache.page("good" * 16) == {"content": "ok"}
    assert cache.page("torn" * 16) is None and not cache.has_page("torn" * 16)
    # an entry whose bytes are damaged inside a readable pack is a miss, not an error
    path = write_pack(folder, {"bad" * 16 + "xxxx": b"\x80\x05 not a pickle"})
    assert path is not None and cache.page("bad" * 16 + "xxxx") is None


def test_records_read_in_several_processes_are_kept_in_packs(tmp_path: Path, records: Path) -> None:
    """The processes that read the records keep each batch's entries in one pack of each kind (not two files per
    record), and a later build finds every record there."""
    cache = SiteCache(tmp_path / "c")
    first = load_site(records, cache=cache, workers=2)
    n = len(first.records)
    assert n >= site_records.MIN_PARALLEL
    for kind in (site_records.KIND, site_records.WHOLE_KIND):
        kept = _files(cache.folder / kind)
        assert kept and all(p.parent.name == PACKS for p in kept), kind
        assert len(kept) <= -(-n // site_records.INTERVAL_BATCH)  # one per batch of records read together
    later = SiteCache(tmp_path / "c")
    second = load_site(records, cache=later)
    assert (later.hits, later.misses) == (n, 0)
    assert [second.whole(r.record) for r in second.records] == [first.whole(r.record) for r in first.records]
