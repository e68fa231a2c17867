"""Generated files kept by content in the site cache and hard-linked into each build (bench/site/_outputs.py): the
site gets the bytes it asked for whatever happened to the kept file, a site changed in place never changes another,
no link possible still writes the file, and pruning removes only what nothing uses."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from bench.site import Outputs
from bench.site import _outputs as outputs_module
from bench.site._outputs import KEYED_PREFIX


def test_a_placed_file_is_a_link_to_the_kept_bytes(tmp_path: Path) -> None:
    out = Outputs(tmp_path / "files")
    a, b = tmp_path / "site1" / "x" / "a.csv", tmp_path / "site2" / "a.csv"
    out.place(b"1,2\n", a)
    out.place(b"1,2\n", b)
    assert a.read_bytes() == b.read_bytes() == b"1,2\n"
    assert a.stat().st_ino == b.stat().st_ino and a.stat().st_nlink == 3  # the kept file and two sites
    assert (out.linked, out.written) == (2, 0)
    assert len(list((tmp_path / "files").rglob("*"))) == 2  # one folder, one kept file


def test_a_site_file_changed_in_place_is_noticed_and_never_reaches_another_site(tmp_path: Path) -> None:
    out = Outputs(tmp_path / "files")
    first = tmp_path / "site1" / "page.html"
    out.place(b"<p>right</p>", first)
    with open(first, "r+b") as fh:  # a tool that edits the built site in place edits the kept bytes too
        fh.write(b"<p>WRONG</p>")
    second = tmp_path / "site2" / "page.html"
    out.place(b"<p>right</p>", second)
    assert second.read_bytes() == b"<p>right</p>"
    assert first.read_bytes() == b"<p>WRONG</p>"  # the edited site keeps its own bytes
    assert first.stat().st_ino != second.stat().st_ino


def test_placing_over_a_linked_file_leaves_the_kept_bytes_alone(tmp_path: Path) -> None:
    out = Outputs(tmp_path / "files")
    dest, other = tmp_path / "site" / "a.json", tmp_path / "other" / "a.json"
    out.place(b"[1]", dest)
    out.place(b"[1]", other)
    out.place(b"[2]", dest)  # the same path with new bytes
    assert dest.read_bytes() == b"[2]" and other.read_bytes() == b"[1]"


def test_without_links_the_file_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_link(src: object, dst: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(outputs_module.os, "link", no_link)
    out = Outputs(tmp_path / "files")
    dest = tmp_path / "site" / "a.csv"
    out.place(b"x,y\n", dest)
    assert dest.read_bytes() == b"x,y\n" and dest.stat().st_nlink == 1
    assert (out.linked, out.written) == (0, 1)


def test_a_cache_that_cannot_be_written_still_gives_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs_module, "write_atomic", full)
    out = Outputs(tmp_path / "files")
    dest = tmp_path / "site" / "a.csv"
    out.place(b"x,y\n", dest)
    assert dest.read_bytes() == b"x,y\n" and out.written == 1


def test_prune_removes_only_kept_files_nothing_uses(tmp_path: Path) -> None:
    old = time.time() - 2 * outputs_module.GRACE_S
    first = Outputs(tmp_path / "files")
    first.place(b"linked", tmp_path / "site" / "linked.html")
    for data in (b"unused", b"used again", b"recent"):
        first.keep(data)
    for path in (tmp_path / "files").rglob("*"):
        if path.is_file() and path.read_bytes() != b"recent":
            os.utime(path, (old, old))
    build = Outputs(tmp_path / "files")
    build.keep(b"used again")
    assert build.prune() == 1  # "unused": no link, not used by this build, not used within the grace period
    left = sorted(p.read_bytes() for p in (tmp_path / "files").rglob("*") if p.is_file() and p.name != ".pruned")
    assert left == [b"linked", b"recent", b"used again"]


def test_prune_walks_the_kept_files_at_most_every_quarter_hour(tmp_path: Path) -> None:
    old = time.time() - 2 * outputs_module.GRACE_S
    first = Outputs(tmp_path / "files")
    first.keep(b"one")
    assert first.prune() == 0  # used by this build; the walk stamps the folder
    for path in (tmp_path / "files").rglob("*"):
        if path.is_file() and not path.name.startswith("."):
            os.utime(path, (old, old))
    assert Outputs(tmp_path / "files").prune() == 0  # within PRUNE_EVERY_S of the last walk: not walked
    stamp = tmp_path / "files" / ".pruned"
    long_ago = time.time() - outputs_module.PRUNE_EVERY_S - 1
    os.utime(stamp, (long_ago, long_ago))
    assert Outputs(tmp_path / "files").prune() == 1
    assert [p.name for p in (tmp_path / "files").rglob("*") if p.is_file()] == [".pruned"]


def _unkeyed(parts: list[bytes]) -> list[tuple[str | None, Callable[[], bytes]]]:
    """Parts without keys: a joined file of them is named by its bytes' sha256, as :meth:`Outputs.keep` names one."""
    return [(None, partial(bytes, part)) for part in parts]


def test_bytes_kept_in_parts_are_kept_as_the_whole_would_be(tmp_path: Path) -> None:
    out = Outputs(tmp_path / "files")
    parts = [b"a,b\n", b"1,2\n" * 1000, b"", b"3,4\n"]
    streamed = out.keep_joined("all.csv", _unkeyed(parts))
    assert streamed == out.keep(b"".join(parts)) and streamed.read_bytes() == b"".join(parts)
    assert out.keep_joined("all.csv", _unkeyed(parts)) == streamed  # no second file, no temporary file
    site = tmp_path / "site" / "all.csv"
    out.link(streamed, site)
    with open(site, "r+b") as fh:  # a site changed in place
        fh.write(b"X")
    again = out.keep_joined("all.csv", _unkeyed(parts))
    assert again.read_bytes() == b"".join(parts) and site.read_bytes().startswith(b"X,b")
    assert sorted(p.name for p in (tmp_path / "files").rglob("*") if p.is_file()) == [streamed.name]


def test_a_build_recalls_what_the_same_inputs_made_in_the_last_while_it_is_unchanged(tmp_path: Path) -> None:
    """A file made from the same inputs in the last build is taken unmade, unless its bytes changed since (a site
    file edited in place); a build given no last build recalls nothing."""
    first = Outputs(tmp_path / "files", last={})
    assert first.recall("csv\0record-1") is None
    kept = first.keep(b"a,b\n1,2\n")
    first.note("csv\0record-1", kept)
    first.link(kept, tmp_path / "site" / "r1.csv")
    second = Outputs(tmp_path / "files", last=first.finish())
    assert second.recall("csv\0record-1") == str(kept) and second.recall("csv\0record-2") is None
    assert Outputs(tmp_path / "files").recall("csv\0record-1") is None  # not remembering
    third = Outputs(tmp_path / "files", last=second.finish())
    assert third.recall("csv\0record-1") == str(kept)  # what the second build recalled, the third may too
    site2 = tmp_path / "site2" / "r1.csv"
    third.link(kept, site2)  # the link's size and time are the recalled file's (one inode), not looked up again
    st = site2.stat()
    assert third.placed[str(site2)] == (kept.name, st.st_size, st.st_mtime_ns)
    time.sleep(0.01)
    with open(tmp_path / "site" / "r1.csv", "r+b") as fh:
        fh.write(b"X")
    assert third.recall("csv\0record-1") is None
    assert Outputs(tmp_path / "files", last=third.finish()).recall("csv\0record-1") is None  # forgotten: not used


def test_each_link_is_placed_with_its_own_kept_file_size_and_time(tmp_path: Path) -> None:
    """Two recalled files of different sizes, linked in the other order: each site file is placed with the size and
    time of the kept file it links (the one recall() looked at), as its own stat says."""
    first = Outputs(tmp_path / "files", last={})
    small, large = first.keep(b"a\n"), first.keep(b"b,c,d\n" * 100)
    first.note("small", small)
    first.note("large", large)
    second = Outputs(tmp_path / "files", last=first.finish())
    found = {key: second.recall(key) for key in ("small", "large")}
    for key in ("large", "small"):
        site_file = tmp_path / "site" / f"{key}.csv"
        second.link(found[key] or "", site_file)
        st = site_file.stat()
        assert second.placed[str(site_file)] == (Path(found[key] or "").name, st.st_size, st.st_mtime_ns), key


def test_the_site_cache_hands_what_a_build_made_to_the_next_process(tmp_path: Path) -> None:
    """What one build's outputs made is recalled by a build in another process (the state file in the cache's code
    version folder), not by one of another code version, and a damaged state file recalls nothing."""
    from bench.site import SiteCache
    from bench.site import _cache as cache_module

    cache = SiteCache(tmp_path / "cache", version="v1")
    kept = cache.outputs.keep(b"page")
    cache.outputs.note("page\0a", kept)
    cache.finish()
    cache_module._STATE.clear()  # another process
    assert SiteCache(tmp_path / "cache", version="v1").outputs.recall("page\0a") == str(kept)
    assert SiteCache(tmp_path / "cache", version="v2").outputs.recall("page\0a") is None
    state = next((tmp_path / "cache").rglob("recalled.pickle"))
    state.write_bytes(state.read_bytes()[:20])
    cache_module._STATE.clear()
    damaged = SiteCache(tmp_path / "cache", version="v1")
    assert damaged.outputs.remember and damaged.outputs.recall("page\0a") is None


def test_site_files_get_the_permissions_of_a_new_file_old_kept_files_too(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = Outputs(tmp_path / "files")
        page = tmp_path / "site" / "page.html"
        out.place(b"<p>page</p>", page)
        parts = out.keep_joined("all.csv", _unkeyed([b"a,b\n", b"1,2\n"]))
        out.link(parts, tmp_path / "site" / "all.csv")
        # a kept file an earlier build made readable by its owner alone is linked with a new file's permissions
        stale = out.keep(b"<p>stale</p>")
        stale.chmod(0o600)
        mtime = stale.stat().st_mtime_ns
        Outputs(tmp_path / "files").link(stale, tmp_path / "site2" / "stale.html")
    finally:
        os.umask(old)
    site_files = [page, tmp_path / "site" / "all.csv", tmp_path / "site2" / "stale.html"]
    assert [p.stat().st_mode & 0o777 for p in site_files] == [0o644, 0o644, 0o644]
    assert stale.stat().st_mode & 0o777 == 0o644 and stale.stat().st_mtime_ns == mtime  # bytes and time kept
    assert [p.name for p in (tmp_path / "files").rglob("*") if p.name.startswith(".")] == []  # no probe left


def _keyed(texts: dict[str, bytes], made: list[str]) -> list[tuple[str | None, Callable[[], bytes]]]:
    """Parts named by their keys, each noting in ``made`` when it is made."""

    def make(key: str) -> bytes:
        made.append(key)
        return texts[key]

    return [(key, partial(make, key)) for key in texts]


def test_a_joined_file_copies_the_parts_the_last_one_held(tmp_path: Path) -> None:
    first = {"head": b"a,b\n", "r1": b"1,2\n" * 5000, "r2": b"3,4\n" * 3, "r3": b"5,6\n" * 7000}
    made: list[str] = []
    one = Outputs(tmp_path / "files")
    path = one.keep_joined("all.csv", _keyed(first, made))
    assert path.read_bytes() == b"".join(first.values())
    assert path.name.startswith(KEYED_PREFIX)  # every part keyed: named by the keys, its bytes not hashed
    assert made == ["head", "r1", "r2", "r3"]

    second = {"head": first["head"], "r0": b"0,0\n", "r1": first["r1"], "new": b"9,9\n" * 2, "r3": first["r3"]}
    made.clear()
    two = Outputs(tmp_path / "files", last_joined=one.joined())
    path2 = two.keep_joined("all.csv", [*_keyed(second, made), (None, lambda: b"tail\n")])
    want = b"".join(second.values()) + b"tail\n"
    assert path2.read_bytes() == want and path2.name == hashlib.sha256(want).hexdigest()  # a part without a key
    assert made == ["r0", "new"]  # the others' bytes came from the last file
    assert path.read_bytes() == b"".join(first.values())  # the last file (linked by a site, maybe) unchanged
    kept, size, _, layout = two.joined()["all.csv"]
    assert kept == str(path2) and size == len(want)
    assert {k: want[o : o + n] for k, (o, n) in layout.items()} == second  # every keyed part where it lies


def test_a_file_joined_from_keyed_parts_is_named_by_its_keys_and_the_code_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same keys in the same order under the same code version: the same name; another order, another key or
    another version (whose keys may name other bytes): another file. The parts the last file held are copied by the
    kernel, not read here; a site file linked to the last one keeps its bytes."""
    texts = {"head": b"x,y\n", "r1": b"1,1\n" * 3000, "r2": b"2,2\n" * 5}
    made: list[str] = []
    one = Outputs(tmp_path / "files", namespace="v1")
    first = one.keep_joined("all.csv", _keyed(texts, made))
    site = tmp_path / "site" / "all.csv"
    one.link(first, site)
    assert str(site) not in one.placed  # placed: files named by their bytes' sha256 (the offline check trusts it)
    elsewhere = tmp_path / "other"  # (made again here, the file would be replaced: the next build could not copy)
    assert Outputs(elsewhere, namespace="v1").keep_joined("all.csv", _keyed(texts, made)).name == first.name
    assert Outputs(elsewhere, namespace="v2").keep_joined("all.csv", _keyed(texts, made)).name != first.name
    swapped = {k: texts[k] for k in ("head", "r2", "r1")}
    assert Outputs(elsewhere, namespace="v1").keep_joined("all.csv", _keyed(swapped, made)).name != first.name

    reads: list[int] = []
    real_pread = os.pread

    def pread(fd: int, n: int, at: int) -> bytes:
        reads.append(n)
        return real_pread(fd, n, at)

    monkeypatch.setattr(os, "pread", pread)
    grown = {**texts, "r3": b"3,3\n" * 7}
    made.clear()
    two = Outputs(tmp_path / "files", namespace="v1", last_joined=one.joined())
    second = two.keep_joined("all.csv", _keyed(grown, made))
    assert second.read_bytes() == b"".join(grown.values()) and made == ["r3"]
    if hasattr(os, "copy_file_range"):
        assert reads == []  # the three old parts, one run, copied by the kernel
    assert site.read_bytes() == b"".join(texts.values())


def test_a_joined_file_is_made_whole_where_the_kernel_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = {"a": b"A" * 5000, "b": b"B" * 7}
    made: list[str] = []
    one = Outputs(tmp_path / "files")
    one.keep_joined("all.json", _keyed(texts, made))

    def refused(*_: object) -> int:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", refused, raising=False)
    grown = {**texts, "c": b"C"}
    made.clear()
    two = Outputs(tmp_path / "files", last_joined=one.joined())
    assert two.keep_joined("all.json", _keyed(grown, made)).read_bytes() == b"A" * 5000 + b"B" * 7 + b"C"
    assert made == ["c"]


def test_parts_are_not_copied_from_a_file_another_name_joined(tmp_path: Path) -> None:
    made: list[str] = []
    one = Outputs(tmp_path / "files")
    one.keep_joined("a.csv", _keyed({"x": b"1\n"}, made))
    two = Outputs(tmp_path / "files", last_joined=one.joined())
    two.keep_joined("b.csv", _keyed({"x": b"1\n"}, made))
    assert made == ["x", "x"]


def test_a_last_joined_file_changed_since_is_not_copied_from(tmp_path: Path) -> None:
    texts = {"a": b"A" * 100, "b": b"B" * 100}
    made: list[str] = []
    one = Outputs(tmp_path / "files")
    path = one.keep_joined("all.json", _keyed(texts, made))
    with open(path, "r+b") as fh:  # a site file edited in place (a link shares the kept file's bytes)
        fh.write(b"Z" * 100)
    made.clear()
    two = Outputs(tmp_path / "files", last_joined=one.joined())
    again = two.keep_joined("all.json", _keyed(texts, made))
    assert made == ["a", "b"] and again.read_bytes() == b"A" * 100 + b"B" * 100


def test_a_joined_file_that_cannot_be_copied_from_fails_and_leaves_nothing(tmp_path: Path) -> None:
    made: list[str] = []
    one = Outputs(tmp_path / "files")
    path = one.keep_joined("all.csv", _keyed({"a": b"A" * 10}, made))
    st = path.stat()
    # what the last build noted says more than the file holds (cut short behind its size and time's back)
    two = Outputs(tmp_path / "files", last_joined={"all.csv": (str(path), st.st_size, st.st_mtime_ns, {"a": (5, 50)})})
    with pytest.raises(OSError, match="ended early"):
        two.keep_joined("all.csv", _keyed({"a": b"A" * 10}, made))
    assert sorted(p.name for p in (tmp_path / "files").rglob("*") if p.is_file()) == [path.name]
    assert "all.csv" not in two.joined()  # the next build does not try it again
    made.clear()
    assert two.keep_joined("all.csv", _keyed({"a": b"A" * 10}, made)) == path and made == ["a"]
