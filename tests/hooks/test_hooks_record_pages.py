"""Record pages rendered outside MkDocs' per-page pipeline (hooks/record_pages.py): the same pages MkDocs makes,
cached bodies that a change invalidates, and links still checked in strict mode."""

from __future__ import annotations

import gc
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path, PurePath

import pytest
from hooks_helpers import ROOT, mkdocs_env

from bench.site import VERSION_GRACE_S, load_site

CONVERTED = re.compile(r"(\d+) record page\(s\): (\d+) converted")
RECALLED = re.compile(r"(\d+) page\(s\) as the last build made them")
GENERATED = re.compile(r"(\d+) generated page\(s\): (\d+) converted")


def _build(
    site: Path, records: Path, *, cache: Path | str = "off", config: Path = ROOT / "mkdocs.yml", **env: str
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    full = dict(mkdocs_env(records), BENCHBOOK_CACHE_DIR=str(cache), **env)
    return subprocess.run(cmd, cwd=config.parent, env=full, capture_output=True, text=True, timeout=300, check=False)


def _converted(result: subprocess.CompletedProcess[str], pattern: re.Pattern[str] = CONVERTED) -> tuple[int, int]:
    assert result.returncode == 0, result.stdout + result.stderr
    m = pattern.search(result.stderr)
    assert m is not None, result.stderr
    return int(m.group(1)), int(m.group(2))


def _tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", proj / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", proj / "docs")
    shutil.copytree(ROOT / "hooks", proj / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (proj / "records").mkdir()
    return proj


def test_record_pages_are_the_pages_mkdocs_renders_for_the_same_markdown(
    tmp_path: Path, project: Path, site_records: Path
) -> None:
    """Cold, warm (bodies from the cache) and through MkDocs' own pipeline: every file of the site the same (with a
    site_url, so that pages carry their canonical address and the sitemap lists them)."""
    config = project / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8") + "\nsite_url: https://bench.example/docs/\n")
    direct = _build(tmp_path / "direct", site_records, cache=tmp_path / "cache", config=config)
    n, converted = _converted(direct)
    assert n == converted == len(list(site_records.rglob("*.json")))
    g, g_converted = _converted(direct, GENERATED)
    warm = _build(tmp_path / "warm", site_records, cache=tmp_path / "cache", config=config)
    assert _converted(warm) == (n, 0)
    assert _converted(warm, GENERATED) == (g, 0)
    recalled = RECALLED.search(warm.stderr)  # every page linked as the last build (another process) made it
    assert recalled is not None and int(recalled.group(1)) == n + g, warm.stderr
    mkdocs = _build(tmp_path / "mkdocs", site_records, config=config, BENCHBOOK_RECORD_PAGES="generator")
    assert mkdocs.returncode == 0, mkdocs.stdout + mkdocs.stderr
    assert CONVERTED.search(mkdocs.stderr) is None  # MkDocs built the record pages itself
    assert GENERATED.search(mkdocs.stderr) is None  # and the other generated pages
    want = _tree(tmp_path / "mkdocs")
    pages = [p for p in want if p.startswith("records/") and p.endswith(".html") and p != "records/index.html"]
    assert len(pages) == n
    # every experiment's and configuration's page (the indexes in the navigation stay MkDocs' own)
    others = [p for p in want if p.startswith(("experiments/", "history/")) and p.endswith(".html")]
    assert g == g_converted == len(others) - 2 and len(others) > 10
    for name in ("direct", "warm"):
        got = _tree(tmp_path / name)
        assert sorted(got) == sorted(want)
        differ = [p for p in want if got[p] != want[p]]
        assert differ == [], f"{name}: {differ[:5]}"
    page = want[pages[0]].decode()
    # what the shell holds: Material's header, the palette toggle, the page's TOC, the site's scripts
    assert 'data-md-component="palette"' in page and 'data-md-component="toc"' in page
    assert "tablesort.min.js" in page and '<h1 id="' in page
    assert f'<link rel="canonical" href="https://bench.example/docs/{pages[0]}">' in page
    sitemap = want["sitemap.xml"].decode()
    assert all(f"<loc>https://bench.example/docs/{p}</loc>" in sitemap for p in pages)


def _last_of_a_configuration(records: Path) -> tuple[Path, str]:
    site = load_site(records)
    for recs in site.configurations.values():
        if len(recs) >= 2:
            last = site.by_id[recs[-1].id]
            return last.path, last.record.id
    raise AssertionError("no configuration with two records")


def test_a_changed_record_converts_only_its_page(tmp_path: Path, site_records: Path) -> None:
    records = tmp_path / "records"
    shutil.copytree(site_records, records)
    cache = tmp_path / "cache"
    n, _ = _converted(_build(tmp_path / "s1", records, cache=cache))
    path, rid = _last_of_a_configuration(records)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["description"] = "A description added after the first build."
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    assert _converted(_build(tmp_path / "s2", records, cache=cache)) == (n, 1)
    page = next((tmp_path / "s2" / "records").rglob(f"{rid}.html")).read_text(encoding="utf-8")
    assert "A description added after the first build." in page


def test_a_site_cache_carried_to_another_machine_serves_another_checkouts_build(
    tmp_path: Path, site_records: Path
) -> None:
    """What the records workflow does (.github/workflows/records.yml): a build of main leaves its site cache, the
    cache is carried to another runner (every file new: other inodes, other times) and a pull request's checkout
    (its records new files too) builds with it. Only what the pull request changed is made again, and the site is
    the one a build without any cache makes."""
    main = tmp_path / "main" / "records"
    shutil.copytree(site_records, main)
    n, _ = _converted(_build(tmp_path / "main-site", main, cache=tmp_path / "cache"))
    carried = tmp_path / "runner" / "cache"
    shutil.copytree(tmp_path / "cache", carried)  # as actions/cache carries it: new files, their times kept
    pr = tmp_path / "pr" / "records"
    shutil.copytree(main, pr, copy_function=shutil.copyfile)
    path, rid = _last_of_a_configuration(pr)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["description"] = "A description the pull request adds."
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    # the cache also holds what builds of other benchbook versions left: one unused for longer than the grace goes
    stale, recent = carried / ("0" * 24), carried / ("1" * 24)
    for folder, days in ((stale, VERSION_GRACE_S / 86400 + 1), (recent, 1.0)):
        (folder / "record").mkdir(parents=True)
        then = time.time() - days * 86400
        os.utime(folder, (then, then))
    warm = _build(tmp_path / "pr-site", pr, cache=carried)
    assert _converted(warm) == (n, 1)
    assert not stale.exists() and recent.is_dir()
    days = VERSION_GRACE_S // 86400
    assert f"site cache: 1 other code version(s) no build used in {days} days removed ({stale.name})" in warm.stderr
    g, made = _converted(warm, GENERATED)
    assert g > 10 and made < g  # the experiments' and histories' pages the change leaves alone: from the cache
    cold = _build(tmp_path / "cold-site", pr)
    assert _converted(cold) == (n, n)
    want, got = _tree(tmp_path / "cold-site"), _tree(tmp_path / "pr-site")
    assert sorted(got) == sorted(want)
    assert [p for p in want if got[p] != want[p]] == []
    page = next((tmp_path / "pr-site" / "records").rglob(f"{rid}.html")).read_text(encoding="utf-8")
    assert "A description the pull request adds." in page


def test_a_broken_link_in_a_record_page_fails_strict_also_when_its_body_is_cached(
    tmp_path: Path, project: Path, site_records: Path
) -> None:
    cache = tmp_path / "cache"
    config = project / "mkdocs.yml"
    n, _ = _converted(_build(tmp_path / "ok", site_records, cache=cache, config=config))
    hooks = project / "hooks" / "site_hooks.py"  # the adapter's code changed: every body is converted again
    hooks.write_text(hooks.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert _converted(_build(tmp_path / "again", site_records, cache=cache, config=config)) == (n, n)
    _, rid = _last_of_a_configuration(site_records)
    # the generated pages without one record's JSON download, which its page links to
    script = project / "hooks" / "gen_pages.py"
    text = script.read_text(encoding="utf-8")
    loop = "record_pages=not direct_record_pages()):\n"
    assert loop in text
    script.write_text(text.replace(loop, loop + f"    if path.endswith('{rid}.json'):\n        continue\n"))
    bad = _build(tmp_path / "bad", site_records, cache=cache, config=config)
    assert bad.returncode != 0
    log = bad.stdout + bad.stderr
    assert re.search(rf"Doc file 'records/[^']+/{rid}\.md' contains a link '{rid}\.json', but the target", log), log
    assert "in strict mode" in log
    assert CONVERTED.search(log) is not None and CONVERTED.search(log).group(2) == "1"  # type: ignore[union-attr]


def test_bodies_converted_in_several_processes_make_the_same_site(tmp_path: Path, site_records: Path) -> None:
    one = _build(tmp_path / "one", site_records, cache=tmp_path / "c1", BENCHBOOK_BUILD_WORKERS="1")
    two = _build(tmp_path / "two", site_records, cache=tmp_path / "c2", BENCHBOOK_BUILD_WORKERS="2")
    assert _converted(one) == _converted(two) and _converted(one, GENERATED) == _converted(two, GENERATED)
    assert "bodies converted here" not in one.stderr and "bodies converted here and in 1 forked" in two.stderr
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    bad = _build(tmp_path / "bad", site_records, cache=tmp_path / "c3", BENCHBOOK_BUILD_WORKERS="many")
    assert bad.returncode != 0
    assert "BENCHBOOK_BUILD_WORKERS: expected a whole number of processes, at least 1, got 'many'" in bad.stderr


def _build_here_in_two_processes(tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mkdocs build`` of the site in this process (two build processes, an empty cache), as the hooks run it."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    for name, value in mkdocs_env(site_records).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BENCHBOOK_BUILD_WORKERS", "2")
    monkeypatch.chdir(ROOT)
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    config.plugins.on_startup(command="build", dirty=False)  # as `mkdocs build` starts: converters for a build
    build(config)


def test_bodies_converted_for_the_cache_are_not_held_in_memory(
    tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body converted ahead of the writing pass (in a forked converter, or this process's own share) goes to the
    cache and is dropped: each file keeps its last ``Page``, and a converter that kept their HTML and Markdown grew
    by 600 MiB over 1,500 pages (a cold build of 3,000 records peaked at twice the memory of one process)."""

    monkeypatch.syspath_prepend(str(ROOT / "hooks"))
    import record_pages  # the module MkDocs' hook imports (the hooks folder on sys.path)

    held: list[str] = []
    done: list[str] = []

    def here(items: list[tuple[str, str | None, object]], work: object, workers: int, **options: object) -> int:
        work(items)  # type: ignore[operator]
        pages = work.__self__  # type: ignore[attr-defined]
        done.extend(src for src, _, _ in items)
        held.extend(src for src, _, _ in items if pages.files[src].page.content or pages.files[src].page.markdown)
        written = options.get("done")  # the pages written as soon as converted (in_workers's contract)
        if callable(written):
            written(items)
            held.extend(src for src, _, _ in items if pages.files[src].page.content or pages.files[src].page.markdown)
        return 0

    monkeypatch.setattr(record_pages, "in_workers", here)
    _build_here_in_two_processes(tmp_path, site_records, monkeypatch)
    assert len(done) > record_pages.MIN_PARALLEL  # the converters ran, over every page
    assert held == []
    assert gc.get_freeze_count() == 0  # the loaded site, kept from the collector during the build, released after


def test_each_page_is_written_once_as_soon_as_its_chunk_is_converted(
    tmp_path: Path, site_records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With converters forked, this process writes each chunk's pages when the chunk is converted (its own or a
    child's: in_workers's ``done``), during the conversions, and no page a second time in the writing pass."""

    monkeypatch.syspath_prepend(str(ROOT / "hooks"))
    import record_pages

    converting = [False]
    written: list[tuple[str, bool]] = []
    real_in_workers, real_write = record_pages.in_workers, record_pages.RecordPages._write

    def in_workers(*args: object, **options: object) -> int:
        converting[0] = True
        try:
            return real_in_workers(*args, **options)  # type: ignore[arg-type]
        finally:
            converting[0] = False

    def write(self: object, src: str, *rest: object) -> bool:
        written.append((src, converting[0]))
        return real_write(self, src, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(record_pages, "in_workers", in_workers)
    monkeypatch.setattr(record_pages.RecordPages, "_write", write)
    _build_here_in_two_processes(tmp_path, site_records, monkeypatch)
    pages = [src for src, _ in written]
    assert len(pages) == len(set(pages))  # each once
    records = {
        f"records/{p.relative_to(site_records).with_suffix('.md').as_posix()}" for p in site_records.rglob("*.json")
    }
    assert records <= set(pages)
    during = {src for src, when in written if when}
    assert records <= during  # every record page (all converted, an empty cache) written while they were converted


def test_a_build_with_the_cache_links_its_generated_files_from_it(tmp_path: Path, site_records: Path) -> None:
    """Record pages and downloads are hard links to the bytes kept in the site cache (bench.site.Outputs): a second
    site built from the same records shares them."""
    first = _build(tmp_path / "one", site_records, cache=tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    second = _build(tmp_path / "two", site_records, cache=tmp_path / "cache")
    assert second.returncode == 0, second.stderr
    m = re.search(r"(\d+) generated file\(s\) linked from the site cache, (\d+) written", second.stderr)
    assert m is not None and int(m.group(1)) > 3 * len(list(site_records.rglob("*.json"))) and m.group(2) == "0"
    record = sorted(site_records.rglob("*.json"))[0]
    rel = record.relative_to(site_records).with_suffix("")
    shared = [f"records/{rel}.html", f"records/{rel}.json", f"records/{rel}.csv"]
    for name in shared:
        one, two = tmp_path / "one" / name, tmp_path / "two" / name
        assert one.stat().st_ino == two.stat().st_ino and one.read_bytes() == two.read_bytes(), name
    assert (tmp_path / "two" / shared[1]).read_bytes() == record.read_bytes()  # its raw JSON, unredacted: no secret


def test_a_link_is_looked_up_as_mkdocs_looks_it_up_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """``page_parts.found_file`` finds what ``Files.get_file_from_path`` finds, for a source path as given and for
    one MkDocs normalizes first; ``Recording`` records every path asked and whether one was missing."""

    monkeypatch.syspath_prepend(str(ROOT / "hooks"))
    import page_parts
    from mkdocs.structure.files import File, Files

    files = Files([File(p, "/docs", "/site", False) for p in ("records/a/b.md", "index.md", "history/x.md")])
    for path in ("records/a/b.md", "records//a/b.md", "records/a/./b.md", "index.md", "history/y.md", "b.md"):
        assert page_parts.found_file(files, path) is files.get_file_from_path(path), path
    # a path taken for its own normal form is one (a miss is not looked up again): any path of these characters
    for n in range(1, 6):
        for chars in itertools.product("a./-_\\ ", repeat=n):
            path = "".join(chars)
            if page_parts._NORMAL.fullmatch(path):
                assert PurePath(path).as_posix() == path, path
    assert page_parts._NORMAL.fullmatch("records/h200-sglang/20261201T080000Z-eagle3-abc1234.md")
    assert page_parts.found_file(files, "records//a/b.md") is files.src_uris["records/a/b.md"]
    recording = page_parts.Recording(files)
    assert recording.get_file_from_path("records/a/b.md") is files.src_uris["records/a/b.md"]
    assert not recording.missed
    assert recording.get_file_from_path("history/y.md") is None
    assert recording.asked == ["records/a/b.md", "history/y.md"] and recording.missed
