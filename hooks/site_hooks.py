"""MkDocs hooks: a thin adapter over ``bench.site``.

* ``on_config``      watch the records folder (also when ``$BENCHBOOK_RECORDS_DIR`` points elsewhere) and
                     ``benchbook.yaml``; highlight each distinct code block once (``hooks/highlight_memo.py``);
* ``on_pre_build``   load records, dead ends, ``benchbook.yaml`` and the git provenance of every record
                     (one ``git log``) once per build; each bad record is a WARNING naming the file and
                     field, so ``--strict`` fails and a plain build/serve shows an error box; a bad
                     ``benchbook.yaml`` fails the build;
* ``on_startup``     note the command (``build``: page bodies may be converted in several processes;
                     ``serve``: each rebuild reuses the unchanged records the last one loaded);
* ``on_files``       register the record pages (``hooks/record_pages.py``: rendered outside MkDocs' per-page
                     pipeline, their bodies kept in the site cache);
* ``on_env``         keep the theme's compiled templates for the next build of this process
                     (``hooks/template_memo.py``); make, fill and write the record pages (in a build, the
                     bootstrap resamples the generator kept are dropped first: ``bench.compare.forget_resamples``);
* ``on_page_markdown`` expand ``<!-- bench:... -->`` shortcodes (a bad one fails the build, naming
                     the page), put the front-matter summary on dead-end pages, and take the heavy blocks
                     (tables, chart figures, one-line lists, code blocks) out as ready HTML;
* ``on_page_content`` put the pre-rendered tables, charts, lists and code blocks (``bench.site.prerender``) in place;
* ``on_post_build``  fail the build if any page loads something from outside (``bench.site.check_site``);
                     allowed: ``extra.benchbook.offline_allow`` and the site's own ``site_url``; add the
                     generated pages' title-and-key-field entries to the search index (their full text is
                     kept out of it: ``bench.site.search_entries``); list the record pages in the sitemap; log
                     how long the offline check took and where the build's time went (``BUILD_PHASES``: the
                     site benchmark reads both).

The generated pages themselves come from ``hooks/gen_pages.py`` (mkdocs-gen-files), which reads the
data loaded here from the config under ``CONFIG_KEY``.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import markdown as python_markdown  # type: ignore[import-untyped]
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page, _RelativePathTreeprocessor

from bench.compare import forget_resamples
from bench.redact import redact_text
from bench.settings import DEFAULT_SETTINGS_FILE, Settings, SettingsError, load_settings
from bench.site import (
    CONFIG_KEY,
    VERSION_GRACE_S,
    WORKERS_KEY,
    ShortcodeError,
    SiteCache,
    SiteData,
    WorkersError,
    build_workers,
    check_site,
    dead_end_page,
    default_cache_dir,
    direct_record_pages,
    expand_shortcodes,
    full_text_indexed,
    keep_loaded_records,
    load_site,
    prerender,
    records_dir,
    restore,
    search_entries,
)

if TYPE_CHECKING:
    from hooks.highlight_memo import install as remember_highlighting
    from hooks.kept_files import add_kept_files
    from hooks.record_pages import RecordPages
    from hooks.template_memo import install as remember_templates
else:  # MkDocs puts this folder on sys.path while it loads a hook
    from highlight_memo import install as remember_highlighting
    from kept_files import add_kept_files
    from record_pages import RecordPages
    from template_memo import install as remember_templates

log = get_plugin_logger("benchbook")
# How long the offline check of this build took, as logged (INFO): "<this> 1.23 s"
OFFLINE_TIMING = "offline check of the built site:"
# Where this build's time went, as logged (INFO) when it ends: "<this> load 1.23 s (2.31 CPU s), generator 0.45 s
# (0.80 CPU s), ..." (the phases of _PHASES, one after the other, from on_pre_build to the end of on_post_build): each
# phase's wall seconds and CPU seconds (cpu_seconds: this process's and its ended children's)
BUILD_PHASES = "build phases:"
_PHASES = (
    ("load", "pre_build", "pre_build_end"),  # the records read, redacted and their rows computed (or cached)
    ("generator", "pre_build_end", "env"),  # the generator script's pages (gen-files), the files and navigation
    ("record pages", "env", "env_end"),  # the record pages and the other generated pages made and written
    ("other pages", "env_end", "post_build"),  # MkDocs' own pages (the navigation's) and the search index
    ("post-build", "post_build", "post_build_end"),  # the offline check, the search entries, the sitemap
)
_MARKS: dict[str, tuple[float, float]] = {}  # this build's: each event's time (time.perf_counter), cpu_seconds()


def cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of its children that have ended and been waited for: a
    phase's forked workers (``bench.site.in_workers``) and helper processes (the offline check's, ``git log``) are all
    waited for before the phase that started them ends, so each phase counts its own."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _mark(event: str) -> None:
    _MARKS[event] = (time.perf_counter(), cpu_seconds())


def _phases_line() -> str | None:
    """This build's phases as :data:`BUILD_PHASES` logs them (None: an event was not seen)."""
    if any(start not in _MARKS or end not in _MARKS for _, start, end in _PHASES):
        return None
    spans = ((name, _MARKS[start], _MARKS[end]) for name, start, end in _PHASES)
    return ", ".join(f"{name} {end[0] - start[0]:.2f} s ({end[1] - start[1]:.2f} CPU s)" for name, start, end in spans)


# Where this build's record pages (hooks/record_pages.py) are kept between the events, in the MkDocs config.
PAGES_KEY = "benchbook_record_pages"
# Page (docs-relative source) -> its pre-rendered blocks and the link resolver that checked their links, from
# on_page_markdown to on_page_content of the same page.
_PRERENDERED: dict[str, tuple[dict[str, str], _RelativePathTreeprocessor | None]] = {}
_COMMAND: str | None = None  # the MkDocs command this process runs (on_startup); None: not told
CODE_KEY = "benchbook_code_blocks"  # this build's code block renderer (_CodeBlocks), in the MkDocs config


class _CodeBlocks:
    """Fenced code blocks as ready HTML (``bench.site.prerender``'s ``code``): converted with ``mkdocs.yml``'s
    Markdown extensions, as the page's own conversion would (a fenced block's HTML does not depend on the page around
    it), once per distinct block: records repeat their engine's payload and their commands page after page."""

    KEPT = 1024  # distinct blocks remembered (each at most bench.site's BLOCK_LIMIT characters)

    def __init__(self, config: MkDocsConfig) -> None:
        self._md = python_markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)
        self._kept: OrderedDict[str, str] = OrderedDict()

    def __call__(self, block: str) -> str:
        found = self._kept.get(block)
        if found is not None:
            self._kept.move_to_end(block)
            return found
        self._md.reset()
        html: str = self._md.convert(block)
        self._kept[block] = html
        if len(self._kept) > self.KEPT:
            self._kept.popitem(last=False)
        return html


def _code_blocks(config: MkDocsConfig) -> _CodeBlocks:
    found = config.get(CODE_KEY)
    if isinstance(found, _CodeBlocks):
        return found
    config[CODE_KEY] = made = _CodeBlocks(config)
    return made


def _records_dir(config: MkDocsConfig) -> Path:
    return records_dir(Path(config.config_file_path).resolve().parent / "records")


def _site(config: MkDocsConfig) -> SiteData:
    site = config.get(CONFIG_KEY)
    if not isinstance(site, SiteData):
        raise PluginError("benchbook: records were not loaded (is hooks/site_hooks.py listed under hooks:?)")
    return site


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    remember_highlighting()
    watched = {str(Path(w).resolve()) for w in config.watch}
    settings = Path(config.config_file_path).resolve().parent / DEFAULT_SETTINGS_FILE
    for path in (str(_records_dir(config)), *((str(settings),) if settings.is_file() else ())):
        if path not in watched:
            config.watch.append(path)
    return config


def _settings(config: MkDocsConfig) -> Settings:
    try:
        return load_settings(root=Path(config.config_file_path).resolve().parent)
    except SettingsError as exc:
        raise PluginError(f"benchbook: {exc}") from None


def on_pre_build(config: MkDocsConfig) -> None:
    _MARKS.clear()
    _mark("pre_build")
    root = Path(config.config_file_path).resolve().parent
    folder = default_cache_dir()
    cache = SiteCache(folder) if folder is not None else None
    if cache is not None:
        cache.mark_used()  # its code version's folder is kept while builds use it (SiteCache.prune_versions)
    workers = config[WORKERS_KEY] = _workers()  # also for the generator script (hooks/gen_pages.py)
    # The loaded site (millions of objects) lives until the build ends: made with the cyclic collector paused and
    # then kept out of its reach until on_post_build, or every full collection walks it again (1.2-1.6 s each at
    # 1,000 records, one or two per build).
    gc.disable()
    try:
        site = load_site(
            _records_dir(config),
            Path(config.docs_dir),
            settings=_settings(config),
            git=True,
            repository=root,
            cache=cache,
            workers=workers,
        )
    finally:
        gc.freeze()
        gc.enable()
    for err in site.errors:
        log.warning("%s", err)
    config[CONFIG_KEY] = site
    _mark("pre_build_end")


def _pages(config: MkDocsConfig) -> RecordPages | None:
    """This build's record pages (None: MkDocs builds them, ``$BENCHBOOK_RECORD_PAGES=generator``)."""
    pages = config.get(PAGES_KEY)
    return pages if isinstance(pages, RecordPages) else None


def on_startup(command: str, dirty: bool) -> None:
    global _COMMAND
    _COMMAND = command
    if command == "serve":  # every rebuild of this process reuses the records the last one loaded, if unchanged
        keep_loaded_records()


def _workers() -> int:
    """Processes reading records and converting page bodies: ``bench.site.build_workers`` for ``mkdocs build`` and
    for the first build of ``mkdocs serve``, which its server runs before it starts a thread (on an empty site cache
    that build is as long as a cold ``mkdocs build``); one while another thread runs (a ``mkdocs serve`` rebuild: a
    forked child would inherit locks its server's threads hold, and a rebuild converts only what changed)."""
    try:
        alone = threading.active_count() == 1
        return build_workers() if _COMMAND == "build" or (_COMMAND == "serve" and alone) else 1
    except WorkersError as exc:
        raise PluginError(f"benchbook: {exc}") from None


def on_files(files: Files, config: MkDocsConfig) -> Files:
    site = _site(config)
    add_kept_files(files, config, site.cache.outputs if site.cache is not None else None)
    config[PAGES_KEY] = None
    if direct_record_pages():
        config[PAGES_KEY] = pages = RecordPages(_site(config), config, files, workers=_workers())
        pages.add_files()
    return files


def on_nav(nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    if (pages := _pages(config)) is not None:
        pages.nav = nav
    return nav


def on_env(env: jinja2.Environment, config: MkDocsConfig, files: Files) -> jinja2.Environment:
    _mark("env")
    remember_templates(env)  # the theme's templates compiled once per process, not once per serve rebuild
    if _COMMAND == "build":  # the generator's statistics are done: record pages are made in less memory
        log.debug("bootstrap resamples forgotten: %.0f MiB", forget_resamples() / 2**20)
    if (pages := _pages(config)) is not None:
        pages.render(env)
        n, converted, shells = len(pages.pages) - len(pages.generated), pages.rendered, len(pages.shells)
        log.info(
            "%d record page(s): %d converted, the others from the site cache; %d page shell(s)", n, converted, shells
        )
        log.info("%d generated page(s): %d converted", len(pages.generated), pages.generated_rendered)
        if pages.recalled:
            log.info("%d page(s) as the last build made them", pages.recalled)
        if pages.forked:
            log.info("bodies converted here and in %d forked process(es)", pages.forked)
    _mark("env_end")
    return env


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    site = _site(config)
    src = page.file.src_uri
    if not full_text_indexed(src):
        page.meta["search"] = {**(page.meta.get("search") or {}), "exclude": True}
    try:
        markdown = expand_shortcodes(markdown, site, src)
    except ShortcodeError as exc:
        raise PluginError(f"benchbook: {exc}") from None
    for dead_end in site.dead_ends:
        if dead_end.path == src:
            markdown = dead_end_page(markdown, dead_end, site.by_id)
    # Tables, chart figures, one-line lists and code blocks as ready HTML (bench.site.prerender): MkDocs resolves and
    # checks their links as it does for the links it converts itself, and records their anchors for its anchor check.
    links = _RelativePathTreeprocessor(page.file, files, config)
    pre = prerender(markdown, links.path_to_url, _code_blocks(config))
    _PRERENDERED[src] = (pre.blocks, links)
    return pre.markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    blocks, links = _PRERENDERED.pop(page.file.src_uri, ({}, None))
    try:
        html = restore(html, blocks)
    except ValueError as exc:
        raise PluginError(f"benchbook: {page.file.src_uri}: {exc}") from None
    if links is not None and links.links_to_anchors:
        anchors = page.links_to_anchors if page.links_to_anchors is not None else {}
        for target, found in links.links_to_anchors.items():
            for anchor, url in found.items():
                anchors.setdefault(target, {}).setdefault(anchor, url)
        page.links_to_anchors = anchors
    return html


def on_post_build(config: MkDocsConfig) -> None:
    _mark("post_build")
    extra: dict[str, Any] = config.extra.get("benchbook") or {}
    allow = tuple(extra.get("offline_allow") or ())
    if config.site_url:  # the site's own address (canonical links; `mkdocs serve` sets it to 127.0.0.1)
        allow += (config.site_url,)
    # every file of every build is checked; one whose bytes were found clean before is not parsed again
    site = _site(config)
    placed = site.cache.outputs.placed if site.cache is not None else None  # linked files: their hash is known
    started = time.perf_counter()
    found = check_site(Path(config.site_dir), allow, cache_dir=default_cache_dir(), known=placed, workers=_workers())
    log.info("%s %.2f s", OFFLINE_TIMING, time.perf_counter() - started)  # benchmarks/site_build.py reads it
    if found:
        listed = "\n  ".join(str(v) for v in found[:50])
        raise PluginError(f"benchbook: the built site loads {len(found)} external resource(s):\n  {listed}")
    _add_search_entries(config, site)
    if (pages := _pages(config)) is not None:
        pages.sitemap()
    gc.unfreeze()  # frozen in on_pre_build
    _collect_once()
    if site.cache is not None:
        outputs = site.cache.outputs
        pruned = outputs.prune()
        site.cache.finish()
        log.info(
            "%d generated file(s) linked from the site cache, %d written; %d kept file(s) no site uses removed",
            outputs.linked,
            outputs.written,
            pruned,
        )
        if versions := site.cache.prune_versions():
            log.info(
                "site cache: %d other code version(s) no build used in %d days removed (%s)",
                len(versions),
                VERSION_GRACE_S // 86400,
                redact_text(", ".join(versions)),  # folder names, but the terminal gets nothing unredacted
            )
    _mark("post_build_end")
    if (phases := _phases_line()) is not None:
        log.info("%s %s", BUILD_PHASES, phases)  # benchmarks/site_build.py reads it


def _collect_once() -> None:
    """In ``mkdocs serve``, one full collection at the end of its first build, while nothing waits for it. The
    cyclic collector counts the site that build left (millions of objects, unfrozen above) as new, so its first full
    collection walked them all during the first rebuild, where a user waits for a new record's page: 0.45 s at 1,000
    records. After one here it counts them as old, and the rebuilds that follow did not trigger another."""
    global _COLLECTED
    if _COMMAND == "serve" and not _COLLECTED:
        _COLLECTED = True
        gc.collect()


_COLLECTED = False  # _collect_once ran in this process


def _add_search_entries(config: MkDocsConfig, site: SiteData) -> None:
    """Append the generated pages' entries to the index the search plugin wrote (none: search is off)."""
    path = Path(config.site_dir) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    for entry in search_entries(site):
        url = File(entry.page, config.docs_dir, config.site_dir, config.use_directory_urls).url
        index["docs"].append({"location": url, "title": entry.title, "text": entry.text})
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)
