"""The offline check over several processes finds what one process finds, in the same order, and keeps the same
clean-file store; the workers are fresh interpreters, and one that fails costs time, never a result."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.site import _offline_pool
from bench.site._offline import check_site
from bench.site._offline_scan import Violation, check_file

N_FILES = 3 * _offline_pool.MIN_FILES_PER_WORKER + 7
PLANTED = {5: "https://cdn.example/a.js", 6: "//cdn.example/b.css", 150: "http://cdn.example/c.png", N_FILES - 1: "x"}


def _site(root: Path) -> Path:
    """A site of N_FILES pages, most clean, some loading something from outside (one with a CSS file)."""
    site = root / "site"
    for i in range(N_FILES):
        page = site / f"d{i % 7}" / f"p{i:04d}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f'<tr><td style="text-align: right">{k}</td><td><a href="../p{k}.html">{k}</a></td></tr>' for k in range(50)
        )
        load = PLANTED.get(i)
        if load == "x":
            (site / f"d{i % 7}" / "style.css").write_text("body { background: url(https://cdn.example/d.png) }")
        elif load is not None:
            body += f'<img src="{load}"><div style="background: url({load})"></div>'
        page.write_text(f"<html><body><table>{body}</table></body></html>")
    return site


def _store(cache: Path) -> str:
    (store,) = (cache / "offline").iterdir()
    return store.read_text()


def test_several_processes_find_what_one_finds_in_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _site(tmp_path)
    one = check_site(site, cache_dir=tmp_path / "c1", workers=1)
    assert len(one) == 2 * 3 + 1  # each planted page: its <img src> and its style's url(); and the CSS file
    assert [v.file for v in one] == sorted(v.file for v in one)  # file order (the walk's), as always

    checked_here: list[str] = []

    def here(path: str, rel: str, clean: frozenset[str], allow: tuple[str, ...]) -> tuple[str, list[Violation]]:
        checked_here.append(rel)
        return check_file(path, rel, clean, allow)

    monkeypatch.setattr(_offline_pool, "check_file", here)
    for workers in (2, 3):
        checked_here.clear()
        several = check_site(site, cache_dir=tmp_path / f"c{workers}", workers=workers)
        assert several == one
        assert _store(tmp_path / f"c{workers}") == _store(tmp_path / "c1")
        assert len(checked_here) == (N_FILES + 1 + workers - 1) // workers  # the rest went to the workers
        in_workers = {v.file for v in one} - set(checked_here)
        assert in_workers  # a planted load in a file only a worker read still fails the check
        assert {v.file for v in several} >= in_workers


def test_a_worker_that_fails_costs_only_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _site(tmp_path)
    one = check_site(site, workers=1)
    for boot in ("import sys; sys.exit(3)", "print('[[1, 2]]')", "print('not json')"):
        monkeypatch.setattr(_offline_pool, "_BOOT", boot)
        assert check_site(site, workers=2) == one


def test_few_files_start_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for i in range(2 * _offline_pool.MIN_FILES_PER_WORKER - 1):
        (site / f"p{i}.html").write_text(f'<img src="{"https://x/" if i == 3 else ""}a.png">')

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started for fewer files than two workers need")

    monkeypatch.setattr(_offline_pool.subprocess, "Popen", no_process)
    assert [v.url for v in check_site(site, workers=8)] == ["https://x/a.png"]
