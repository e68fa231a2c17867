"""The offline check remembers the files it found clean: it still checks every file of every build, parses again only
what changed, and never lets an external load through because of what it remembers."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench.site._offline as offline
import bench.site._offline_scan as scan
from bench.site import check_site

PAGE = '<html><head><link rel="stylesheet" href="assets/site.css"></head><body><a href="b.html">b</a></body></html>'
PLANTED = '<html><body><script src="https://cdn.example/x.js"></script></body></html>'


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    (folder / "assets").mkdir(parents=True)
    for i in range(5):
        (folder / f"p{i}.html").write_text(PAGE.replace("b.html", f"b{i}.html"), encoding="utf-8")
    (folder / "assets" / "site.css").write_text("body { background: url(img/a.png) }", encoding="utf-8")
    (folder / "assets" / "logo.svg").write_text('<svg><image href="a.png"/></svg>', encoding="utf-8")
    return folder


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the check parses (rather than finds clean in its cache)."""
    seen: list[str] = []
    plain = scan.check_bytes

    def check_bytes(data: bytes, file: str, allow: tuple[str, ...], *, css: bool) -> list[offline.Violation]:
        seen.append(file)
        return plain(data, file, allow, css=css)

    monkeypatch.setattr(scan, "check_bytes", check_bytes)
    return seen


def test_a_clean_file_is_parsed_once_and_a_changed_one_again(site: Path, tmp_path: Path, parsed: list[str]) -> None:
    cache = tmp_path / "cache"
    assert check_site(site, cache_dir=cache) == []
    assert len(parsed) == 7
    (store,) = (cache / "offline").iterdir()
    assert len(store.read_text(encoding="ascii").split()) == 7
    parsed.clear()
    assert check_site(site, cache_dir=cache) == []
    assert parsed == []
    (site / "p3.html").write_text(PAGE.replace("b.html", "c.html"), encoding="utf-8")
    assert check_site(site, cache_dir=cache) == []
    assert parsed == ["p3.html"]


@pytest.mark.parametrize("where", ["new file", "changed file", "same bytes as a clean css file"])
def test_a_planted_external_load_fails_every_build_cached_or_not(
    site: Path, tmp_path: Path, parsed: list[str], where: str
) -> None:
    cache = tmp_path / "cache"
    assert check_site(site, cache_dir=cache) == []
    target = {"new file": "new.html", "changed file": "p1.html", "same bytes as a clean css file": "x.html"}[where]
    if where == "same bytes as a clean css file":  # a digest is of the file's kind and its bytes, not bytes alone
        (site / "assets" / "x.css").write_text(PLANTED, encoding="utf-8")
        assert check_site(site, cache_dir=cache) == []  # as CSS these bytes load nothing
    (site / target).write_text(PLANTED, encoding="utf-8")
    for _ in range(3):
        found = check_site(site, cache_dir=cache)
        assert [(v.file, v.url) for v in found] == [(target, "https://cdn.example/x.js")]
    assert check_site(site) == found  # the same findings with the cache off


def test_a_changed_allow_list_or_check_code_checks_again(
    site: Path, tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    (site / "cdn.html").write_text(PLANTED, encoding="utf-8")
    assert check_site(site, ("https://cdn.example/",), cache_dir=cache) == []
    parsed.clear()
    assert check_site(site, ("https://cdn.example/",), cache_dir=cache) == []
    assert parsed == []
    found = check_site(site, (), cache_dir=cache)
    assert [v.file for v in found] == ["cdn.html"]
    assert len(parsed) == 8  # another allow list: every file parsed again
    parsed.clear()
    monkeypatch.setattr(offline, "_CHECK_CODE", "another version of the check")
    assert check_site(site, ("https://cdn.example/",), cache_dir=cache) == []
    assert len(parsed) == 8


def test_off_without_a_cache_folder_and_harmless_when_it_cannot_be_written(
    site: Path, tmp_path: Path, parsed: list[str]
) -> None:
    assert check_site(site) == []
    assert check_site(site) == []
    assert len(parsed) == 14
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x", encoding="utf-8")
    assert check_site(site, cache_dir=blocked) == []  # cannot write under a file: still checked, nothing kept
    (site / "p0.html").write_text(PLANTED, encoding="utf-8")
    assert [v.file for v in check_site(site, cache_dir=blocked)] == ["p0.html"]


def test_a_torn_or_foreign_store_is_ignored(site: Path, tmp_path: Path, parsed: list[str]) -> None:
    cache = tmp_path / "cache"
    (site / "p0.html").write_text(PLANTED, encoding="utf-8")
    assert len(check_site(site, cache_dir=cache)) == 1
    (store,) = (cache / "offline").iterdir()
    assert len(store.read_text(encoding="ascii").split()) == 6  # the dirty file is not kept
    store.write_bytes(b"\xff\xfe not digests\n" + b"0" * 64)
    parsed.clear()
    assert len(check_site(site, cache_dir=cache)) == 1
    assert len(parsed) == 7


def test_a_linked_file_whose_hash_is_known_is_not_read_unless_it_changed(
    site: Path, tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files the build linked from kept files (``known``: their bytes' sha256, size and modification time) are not
    read again when found clean before; one changed in place since (size or time differ) is read and parsed, and a
    planted external load in it is still caught; a known hash not found clean before is parsed."""
    import hashlib
    import os

    cache = tmp_path / "cache"
    page = site / "p0.html"

    def known() -> dict[str, tuple[str, int, int]]:
        st = page.stat()
        return {str(page): (hashlib.sha256(page.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns)}

    told = known()
    assert check_site(site, cache_dir=cache, known=told) == [] and "p0.html" in parsed  # not clean before: parsed
    reads: list[str] = []
    plain = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self.name)
        return plain(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    parsed.clear()
    assert check_site(site, cache_dir=cache, known=told) == []
    assert "p0.html" not in reads and "p1.html" in reads and parsed == []
    with open(page, "r+b") as fh:  # changed in place: the link's kept bytes change with it
        fh.write(PLANTED.encode().ljust(len(PAGE)))
    os.utime(page, ns=(told[str(page)][2] + 10**9, told[str(page)][2] + 10**9))
    found = check_site(site, cache_dir=cache, known=told)
    assert [v.url for v in found] == ["https://cdn.example/x.js"] and "p0.html" in reads
