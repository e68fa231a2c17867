"""``mkdocs serve`` rebuilds (hooks/record_pages.py ``_recall``, bench.site.Outputs ``recall``): a page made from
the same body, shell and title as in the last build of the process is linked as that build made it, without its
body being read; a changed record's page is made afresh; either way the site is the one a fresh build makes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hooks_helpers import ROOT, mkdocs_env
from test_hooks_record_pages import _build, _tree

from bench.site import keep_loaded_records


@pytest.fixture
def serving(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(ROOT / "hooks"))
    yield
    keep_loaded_records(False)
    from bench.site import _cache

    _cache._STATE.clear()


def _serve_build(site: Path) -> object:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site))
    config.plugins.on_startup(command="serve", dirty=False)
    build(config, serve_url="http://127.0.0.1:8000/")
    return config["benchbook_record_pages"]


def _serving_records(tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the site's records, the build's environment pointing at it and at a cache under ``tmp_path``."""
    records = tmp_path / "records"
    shutil.copytree(site_records, records)
    for name, value in mkdocs_env(records).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(ROOT)
    return records


def test_a_rebuild_links_unchanged_pages_and_makes_the_changed_one(
    tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch, serving: None
) -> None:
    records = _serving_records(tmp_path, site_records, monkeypatch)
    site = tmp_path / "site"
    first = _serve_build(site)
    n = len(first.pages)  # type: ignore[attr-defined]
    assert first.recalled == 0 and n > 50  # type: ignore[attr-defined]
    before = _tree(site)
    second = _serve_build(site)
    assert second.recalled == n  # type: ignore[attr-defined]
    assert _tree(site) == before
    path = sorted(records.rglob("*.json"))[0]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = "A title changed while serving"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    third = _serve_build(site)
    assert 0 < third.recalled < n  # type: ignore[attr-defined]
    page = site / "records" / path.relative_to(records).with_suffix(".html")
    assert "A title changed while serving" in page.read_text(encoding="utf-8")
    fresh = _build(tmp_path / "fresh", records, cache="off")  # another process, no cache: the reference
    assert fresh.returncode == 0, fresh.stderr
    want, got = _tree(tmp_path / "fresh"), _tree(site)
    differ = [p for p in want if got.get(p) != want[p] and p not in ("sitemap.xml", "sitemap.xml.gz")]
    assert differ == [] and sorted(got) == sorted(want)


def test_serve_forks_only_while_no_other_thread_runs(
    tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch, serving: None
) -> None:
    """The first build of ``mkdocs serve`` runs before its server starts a thread: a cold one reads the records and
    converts the bodies in ``$BENCHBOOK_BUILD_WORKERS`` processes, as ``mkdocs build`` does. With another thread
    alive (a rebuild, the server running) nothing is forked. Either way the site is the one a fresh build makes."""
    import threading

    records = tmp_path / "records"
    shutil.copytree(site_records, records)
    for name, value in mkdocs_env(records).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BENCHBOOK_BUILD_WORKERS", "2")
    monkeypatch.chdir(ROOT)
    assert threading.active_count() == 1
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path / "cache-alone"))
    alone = _serve_build(tmp_path / "alone")
    assert alone.workers == 2 and alone.forked == 1  # type: ignore[attr-defined]
    stop = threading.Event()
    server = threading.Thread(target=stop.wait)  # as the server's threads are during a rebuild
    server.start()
    try:
        monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path / "cache-threads"))  # cold again
        threaded = _serve_build(tmp_path / "threaded")
    finally:
        stop.set()
        server.join()
    assert threaded.workers == 1 and threaded.forked == 0  # type: ignore[attr-defined]
    fresh = _build(tmp_path / "fresh", records, cache="off")
    assert fresh.returncode == 0, fresh.stderr
    want = _tree(tmp_path / "fresh")
    for site in ("alone", "threaded"):
        got = _tree(tmp_path / site)
        differ = [p for p in want if got.get(p) != want[p] and p not in ("sitemap.xml", "sitemap.xml.gz")]
        assert differ == [] and sorted(got) == sorted(want), site


def test_serve_collects_garbage_once_at_the_end_of_its_first_build(
    tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch, serving: None
) -> None:
    """The first full collection of a ``mkdocs serve`` process walks the whole site the first build left: it runs at
    the end of that build, not during the first rebuild a user waits for; ``mkdocs build`` does not run one."""
    import gc

    _serving_records(tmp_path, site_records, monkeypatch)
    full: list[float] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    _serve_build(tmp_path / "first")  # loads the hook module (MkDocs keeps it for the process)
    from mkdocs.config import load_config

    loaded = load_config(str(ROOT / "mkdocs.yml")).hooks  # the modules MkDocs loaded (it keeps them per process)
    hooks = next(m for m in loaded.values() if str(getattr(m, "__file__", "")).endswith("site_hooks.py"))
    monkeypatch.setattr(hooks, "_COLLECTED", False)  # as in a new `mkdocs serve` process
    gc.callbacks.append(note)
    try:
        _serve_build(tmp_path / "first-again")
        after_first = len(full)
        _serve_build(tmp_path / "second")
        after_second = len(full)
    finally:
        gc.callbacks.remove(note)
    assert after_first >= 1 and after_second == after_first and hooks._COLLECTED is True
    monkeypatch.setattr(hooks, "_COLLECTED", False)
    called: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *a: called.append(1) or 0)
    from mkdocs.commands.build import build

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "built"))
    config.plugins.on_startup(command="build", dirty=False)
    build(config)
    assert called == [] and hooks._COLLECTED is False
