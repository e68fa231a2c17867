"""Record pages outside MkDocs' per-page pipeline (MkDocs-specific; the pure parts are ``bench.site``'s
``record_page_key`` and ``Shell``).

MkDocs would read, convert and template every record page on every build and every ``mkdocs serve`` rebuild. Here

* ``on_files`` registers each record page as a ``RecordPageFile`` (``hooks/page_parts.py``): MkDocs resolves and
  checks other pages' links to it as to any page, but does not build it;
* ``on_env`` makes each page's body as MkDocs makes a page's (the ``page_markdown`` / ``page_content`` events of
  every plugin, these hooks included, and ``Page.render`` with ``mkdocs.yml``'s Markdown extensions), or reads it
  from the site cache when nothing it depends on changed (``bench.site.record_page_key``); renders the theme's
  ``main.html`` through MkDocs' own template context once per shell shape (``bench.site.Shell``) and fills it
  per page; writes the page. The links a cached body resolved are looked up again in this build's files: a
  target that is gone renders the page afresh, so MkDocs reports the broken link itself (``--strict`` fails).
  A page the last build made from the same body, shell and title is linked as that build made it, its body not read
  (``_recall``; ``bench.site.Outputs.recall``);
* ``sitemap`` adds the pages to ``sitemap.xml`` (MkDocs lists only the pages it built).

Not run for these pages: ``on_pre_page``, ``on_page_read_source``, ``on_page_context`` and ``on_post_page`` (no
plugin of this site changes a record page there; Material's search reads ``on_page_context``, and record pages
are kept out of full-text search anyway).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import pickle
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from mkdocs import utils
from mkdocs.commands.build import get_context
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, file_sort_key
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page, _RelativePathTreeprocessor
from mkdocs.structure.toc import TableOfContents, get_toc
from mkdocs.utils import meta

from bench.record.load import LoadedRecord
from bench.site import (
    CHILD_ITEMS,
    CHUNKED_RESIDENT_MAX,
    CONTENT_SENTINEL,
    GENERATED_DIRS,
    H1_URL_SENTINEL,
    HEADING_SENTINEL,
    TITLE_SENTINEL,
    Shell,
    ShellError,
    SiteData,
    generated_page_key,
    in_workers,
    record_page_key,
    residual_html,
    shell_key,
    shell_page,
    site_record_markdown,
    toc_shape,
)
from bench.site._paths import record_page

if TYPE_CHECKING:
    from hooks import page_parts as parts
else:  # MkDocs puts this folder on sys.path while it loads a hook
    import page_parts as parts

__all__ = ["RecordPages"]

_HERE = Path(__file__).resolve().parent
_PAGES_LOG = logging.getLogger("mkdocs.structure.pages")  # whose level decides whether Page.render keeps anchor links
_ADAPTER = (
    "record_pages.py",
    "page_parts.py",
    "site_hooks.py",
    "highlight_memo.py",
)  # the code that makes a record page's body (gen_pages.py does not)
_LIBRARIES = ("mkdocs", "markdown", "pymdown-extensions", "mkdocs-material", "pygments")


# Each page's body key and what the page needs of its body but its HTML (title, anchors, links, table of contents,
# the shape of its top-level heading), as the last build left them in the site cache (RecordPages._recall)
BODIES = "record-page-bodies"

_Job = tuple[str, str | None, Callable[[], str]]  # a page, its body's cache key (None: not cached), its Markdown
MIN_PARALLEL = 16  # fewer bodies to convert than this: not worth a fork
# Record pages a process takes from the queue at a time (bench.site.in_workers): pages in a row are mostly of one
# configuration, so a page's previous record was flattened for the page before it in the same process (its memo), and
# its rows, shells and cells recur there. In five interleaved pairs of builds at 1,000 records (records warm, pages
# cold), the record pages took 12.6, 12.7, 15.5, 12.8 and 13.9 s 16 at a time, 15.1, 14.3, 15.3, 15.2 and 15.0 s one
# at a time
PAGE_CHUNK = 16


def _render_residual(page: Page, config: MkDocsConfig, files: Files) -> bool:
    """``Page.render`` without Python-Markdown: the body, table of contents, title, anchors and links to other pages'
    anchors from ``bench.site.residual_html`` (the same, byte for byte, for the Markdown it writes); False (nothing
    set) when the page's Markdown holds anything else."""
    if page.markdown is None:
        return False
    links = _RelativePathTreeprocessor(page.file, files, config)  # what Page.render resolves links with
    made = residual_html(page.markdown, links.path_to_url)
    if made is None:
        return False
    page.content = made.html
    page.toc = get_toc(made.toc)  # type: ignore[arg-type]  # the toc extension's tokens, as Page.render passes them
    page._title_from_render = made.title
    page.present_anchor_ids = set(made.anchors)
    if _PAGES_LOG.getEffectiveLevel() > logging.DEBUG:  # as Page.render keeps them
        page.links_to_anchors = links.links_to_anchors
    return True


def _all_found(files: Files, paths: Sequence[str]) -> bool:
    """Whether every path names a file of this build (``page_parts.found_file``)."""
    return all(parts.found_file(files, p) is not None for p in paths)


def renderer_version(config: MkDocsConfig) -> str:
    """What a converted body depends on besides the record: the Markdown configuration, URL style, the
    libraries' versions and this adapter's code."""
    h = hashlib.sha256()
    h.update(repr((config.markdown_extensions, config.mdx_configs, config.use_directory_urls)).encode())
    h.update(repr([version(lib) for lib in _LIBRARIES]).encode())
    for name in _ADAPTER:
        h.update((_HERE / name).read_bytes())
    return h.hexdigest()


@dataclass
class RecordPages:
    """One build's record pages."""

    site: SiteData
    config: MkDocsConfig
    all_files: Files
    nav: Navigation | None = None
    env: jinja2.Environment | None = None
    files: dict[str, parts.RecordPageFile] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)
    shells: dict[str, Shell | None] = field(default_factory=dict)
    generated: dict[str, str] = field(default_factory=dict)  # generated page -> the file holding its Markdown
    workers: int = 1  # processes converting bodies the cache lacks (bench.site.build_workers)
    rendered: int = 0  # record page bodies converted in this build (the others came from the cache)
    generated_rendered: int = 0  # the same for the generated pages
    forked: int = 0  # child processes that converted bodies and ended well
    converted: set[str] = field(default_factory=set)
    recalled: int = 0  # pages linked as the last build made them (the site cache's outputs: Outputs.recall)
    # for the next build (BODIES): each page's body key and what it needs of the body, pickled (a dict of lists per
    # page took several times the memory: about 150 MB at 10,000 records)
    _bodies: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    _last_bodies: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # the last build's
    _shell_digests: dict[int, str] = field(default_factory=dict)
    _linked: list[str] | None = None  # the folders of what the theme links to (see _linkless)

    def add_files(self) -> None:
        """Register the record pages, and take over the generated pages that are not in the navigation (the
        generator script wrote their Markdown; MkDocs no longer builds them)."""
        files = self.all_files
        for loaded in self.site.records:
            self._register(record_page(loaded.record))
        in_nav = set(parts.nav_pages(self.config.nav or []))
        for f in list(files.documentation_pages()):
            src = f.src_uri
            if src.startswith(GENERATED_DIRS) and src not in in_nav and src not in self.files:
                self.generated[src] = f.abs_src_path or ""
                self._register(src)

    def _register(self, src: str) -> None:
        files = self.all_files
        existing = parts.found_file(files, src)
        if existing is not None:
            files.remove(existing)
        f = parts.RecordPageFile(src, self.config)
        files.append(f)
        self.files[src] = f

    # -- bodies ----------------------------------------------------------------------------------------------

    def _convert(self, markdown: str, page: Page, files: Files) -> tuple[dict[str, Any], bool]:
        """The page's body as MkDocs makes it from ``markdown``, and whether it may be cached (no warning, every
        link found)."""
        config = self.config
        recording = parts.Recording(files)
        warnings = parts.Warnings()
        logger = logging.getLogger("mkdocs")
        logger.addHandler(warnings)
        config._current_page = page
        try:
            page.markdown, page.meta = meta.get_data(markdown)
            page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=recording)
            if not _render_residual(page, config, recording):  # what residual_html cannot write: Markdown
                page.render(config, recording)
            assert page.content is not None
            page.content = config.plugins.on_page_content(page.content, page=page, config=config, files=recording)
        finally:
            config._current_page = None
            logger.removeHandler(warnings)
        body = {
            "content": page.content,
            "meta": page.meta,
            "title": page.title,
            "toc": parts.toc_data(list(page.toc)),
            "anchors": sorted(page.present_anchor_ids or ()),
            "links": sorted(set(recording.asked)),
            "anchor_links": {f.src_uri: links for f, links in (page.links_to_anchors or {}).items()},
        }
        return body, not recording.missed and warnings.count == 0

    def _body(self, key: str | None, markdown: Callable[[], str], page: Page, files: Files) -> dict[str, Any]:
        """The page's body: from the site cache under ``key`` (None: not cached), else converted from
        ``markdown()``."""
        cache = self.site.cache if key is not None else None
        body = cache.page(key) if cache is not None and key is not None else None
        if body is not None and _all_found(files, body["links"]):
            page.meta = body["meta"]
            page.content = body["content"]  # page.toc is made from body["toc"] only where a template needs it
            page.present_anchor_ids = set(body["anchors"])
            page.markdown = ""  # read: Page.title is None without it
            page._title_from_render = body["title"]  # what Page.render found (the first heading) or the meta title
            return body
        body, cacheable = self._convert(markdown(), page, files)
        if cache is not None and key is not None and cacheable:
            cache.remember_page(key, body)
        return body

    # -- the theme's page template ---------------------------------------------------------------------------

    def _shell(
        self,
        env: jinja2.Environment,
        nav: Navigation,
        files: Files,
        page: Page,
        toc: list[dict[str, Any]],
        shape: str | None = None,
    ) -> Shell | None:
        """The shell for pages shaped like ``page`` with the table of contents ``toc`` (None: the theme prints a
        sentinel in a way a shell cannot fill; such pages are rendered whole); ``shape``: ``toc_shape(toc)``, where
        the last build kept it."""
        toc = list(toc)
        content = page.content or ""
        src = page.file.src_uri
        any_folder = self._linkless(nav, src)
        key = shell_key(src, toc, "<h1" in content, any_folder=any_folder, shape=shape)
        if key in self.shells:
            return self.shells[key]
        config = self.config
        probe_file = File(shell_page(src, any_folder=any_folder), None, config.site_dir, config.use_directory_urls)
        probe = Page(None, probe_file, config)
        probe.file.edit_uri = None
        probe.meta = {**page.meta, "title": TITLE_SENTINEL}
        if toc and toc[0]["level"] == 1:
            toc[0] = {**toc[0], "title": HEADING_SENTINEL, "id": H1_URL_SENTINEL[1:]}
        probe.toc = TableOfContents(parts.toc_links(toc))
        marker = CONTENT_SENTINEL + ('<h1 id="x">' if "<h1 id=" in content else "<h1" if "<h1" in content else "")
        probe.content = marker
        try:
            shell: Shell | None = Shell.parse(self._template(env, nav, files, probe), content_marker=marker)
        except ShellError:
            shell = None
        self.shells[key] = shell
        return shell

    def _linkless(self, nav: Navigation, src: str) -> bool:
        """Whether the theme links to nothing inside the folder of ``src`` (no page of the navigation, no extra CSS
        or script lies there): then one shell serves every folder beside it (``shell_page(any_folder=True)``)."""
        if self._linked is None:
            linked = [str(p.file.src_uri) for p in nav.pages]
            linked += [str(x) for x in (*self.config.extra_css, *self.config.extra_javascript)]
            self._linked = [posixpath.dirname(x) + "/" for x in linked]
        folder = posixpath.dirname(src) + "/"
        return "/" in src and not any(x.startswith(folder) for x in self._linked)

    def _template(self, env: jinja2.Environment, nav: Navigation, files: Files, page: Page) -> str:
        page.active = True
        try:
            context = get_context(nav, files, self.config, page)
            return env.get_template(page.meta.get("template", "main.html")).render(context)
        finally:
            page.active = False

    def _write(self, src: str, key: str | None, markdown: Callable[[], str]) -> bool:
        """Make, fill and write one page; whether its body was converted (not found in the cache)."""
        env, nav, files = self.env, self.nav, self.all_files
        assert env is not None and nav is not None, "on_nav runs before on_env"
        f = self.files[src]
        page = Page(None, f, self.config)
        self.pages[src] = page
        converted = False

        def make() -> str:
            nonlocal converted
            converted = True
            return markdown()

        outputs = self.site.cache.outputs if self.site.cache is not None else None
        remembered = outputs is not None and outputs.remember and key is not None
        if remembered and self._recall(src, key, page):
            return False
        body = self._body(key, make, page, files)
        toc = body["toc"]
        shell = self._shell(env, nav, files, page, toc)
        first = toc[0] if toc else None
        title = page.title
        filled = shell is not None and first is not None and first["level"] == 1 and isinstance(title, str)
        if filled:
            assert shell is not None and first is not None and isinstance(title, str)
            html = shell.fill(page=src, title=title, h1_url=f"#{first['id']}", content=body["content"])
        else:
            page.toc = TableOfContents(parts.toc_links(toc))
            html = self._template(env, nav, files, page)
        data = html.encode("utf-8", errors="xmlcharrefreplace")
        if outputs is not None:  # kept by content and linked (bench.site.Outputs)
            kept = outputs.place(data, Path(f.abs_dest_path))
            if remembered and filled and kept is not None and shell is not None and isinstance(title, str):
                assert key is not None
                content = body["content"]
                h1 = '<h1 id="x">' if "<h1 id=" in content else "<h1" if "<h1" in content else ""
                outputs.note(self._page_inputs(src, key, shell, title), kept)
                meta = {k: v for k, v in body.items() if k != "content"}
                meta |= {"h1": h1, "page_title": title, "toc_shape": toc_shape(toc)}
                self._bodies[src] = (key, pickle.dumps(meta, protocol=5))
        else:
            utils.write_file(data, f.abs_dest_path)
        parts.release(page)
        self._anchor_links(page, body["anchor_links"])
        return converted

    def _anchor_links(self, page: Page, anchor_links: dict[str, Any]) -> None:
        files = self.all_files
        page.links_to_anchors = {
            target: links for uri, links in anchor_links.items() if (target := parts.found_file(files, uri)) is not None
        }

    def _page_inputs(self, src: str, key: str, shell: Shell, title: str) -> str:
        """What a filled page is made from: its body (its cache key), its shell and its title."""
        digest = self._shell_digests.get(id(shell))
        if digest is None:
            digest = hashlib.sha256("\0".join((*shell.parts, *shell.slots)).encode("utf-8")).hexdigest()
            self._shell_digests[id(shell)] = digest
        return "\0".join(("page", src, key, digest, title))

    def _recall(self, src: str, key: str | None, page: Page) -> bool:
        """Link the page the last build made from the same body (``key``), shell and title, without reading the body
        (``bench.site.Outputs.recall``); whether it was."""
        env, nav, files = self.env, self.nav, self.all_files
        last = self._last_bodies.get(src)
        if type(last) is not tuple or len(last) != 2 or type(last[1]) is not bytes:  # none, or a damaged state
            return False
        if last[0] != key or key is None or self.site.cache is None or env is None or nav is None:
            return False
        try:
            meta = pickle.loads(last[1])
        except Exception:  # a damaged state file: the page is made again
            return False
        if not _all_found(files, meta["links"]):
            return False  # a target is gone: made afresh, so that MkDocs reports the link
        page.content = meta["h1"]  # what the shell's shape reads of the body
        shape = meta.get("toc_shape")
        shell = self._shell(env, nav, files, page, meta["toc"], shape if isinstance(shape, str) else None)
        page.content = None
        if shell is None:
            return False
        outputs = self.site.cache.outputs
        found = outputs.recall(self._page_inputs(src, key, shell, meta["page_title"]))
        if found is None:
            return False
        outputs.link(found, Path(self.files[src].abs_dest_path))
        page.meta = meta["meta"]
        page.present_anchor_ids = set(meta["anchors"])
        page.markdown = ""
        page._title_from_render = meta["title"]
        self._anchor_links(page, meta["anchor_links"])
        self._bodies[src] = last
        self.recalled += 1
        return True

    def render(self, env: jinja2.Environment) -> None:
        """Make, fill and write every record page and generated page; check the anchors their links name."""
        self.env, files = env, self.all_files
        renderer = renderer_version(self.config)
        cached = self.site.cache is not None
        if self.site.cache is not None and self.site.cache.outputs.remember:
            last = self.site.cache.state(BODIES)
            self._last_bodies = last if isinstance(last, dict) else {}
        jobs: list[_Job] = []
        for loaded in self.site.records:
            key = record_page_key(self.site, loaded, renderer) if cached else None
            jobs.append((record_page(loaded.record), key, partial(self._record_markdown, loaded)))
        for src, source in self.generated.items():
            key = generated_page_key(src, parts.read_text(source), renderer) if cached else None
            jobs.append((src, key, partial(parts.read_text, source)))  # read again when converted: not all held at once
        written = self._convert_missing(jobs)
        for job in jobs:
            if job[0] not in written:
                self._write_job(job)
        if self.site.cache is not None and self.site.cache.outputs.remember:  # for the next build
            self.site.cache.keep_state(BODIES, self._bodies)
        self.rendered = sum(src not in self.generated for src in self.converted)
        self.generated_rendered = len(self.converted) - self.rendered
        for page in self.pages.values():  # every page's anchors are known now
            page.validate_anchor_links(files=files, log_level=self.config.validation.links.anchors)

    def _write_job(self, job: _Job) -> None:
        src, key, markdown = job
        if self._write(src, key, markdown):
            self.converted.add(src)

    def _convert_missing(self, jobs: list[_Job]) -> set[str]:
        """Convert the bodies the site cache lacks in :attr:`workers` processes (``bench.site.in_workers``), into
        the cache, where the writing pass finds them; a body that could not be cached is converted there again. The
        pages written already: this process writes each chunk's pages as soon as the chunk is converted, its own and
        the children's, between its own chunks (at 1,000 records the writing pass took about 2 s of it alone after
        the conversions)."""
        cache = self.site.cache
        written: set[str] = set()
        if cache is None or self.workers < 2:
            return written
        missing = [job for job in jobs if job[1] is not None and not cache.has_page(job[1])]
        if len(missing) < MIN_PARALLEL:
            return written
        self.converted.update(src for src, _, _ in missing)

        def write(chunk: Sequence[_Job]) -> None:
            for job in chunk:
                self._write_job(job)
                written.add(job[0])

        self.forked = in_workers(
            missing,
            self._convert_into_cache,
            self.workers,
            child_setup=parts.quiet_logs,
            max_resident=CHUNKED_RESIDENT_MAX,
            per_child=CHILD_ITEMS,  # a new child every CHILD_ITEMS pages: what one copies is given back
            chunk=PAGE_CHUNK,
            done=write,
        )
        return written

    def _convert_into_cache(self, jobs: Sequence[_Job]) -> None:
        cache = self.site.cache
        assert cache is not None
        bodies: dict[str, dict[str, Any]] = {}
        for src, key, markdown in jobs:
            page = Page(None, self.files[src], self.config)  # also the file's .page, until _write makes another
            body, cacheable = self._convert(markdown(), page, self.all_files)
            if cacheable and key is not None:
                bodies[key] = body
            parts.release(page)
        cache.remember_pages(bodies)  # one file for the chunk (the chunk's pages are written once it returns)

    def _record_markdown(self, loaded: LoadedRecord) -> str:
        return site_record_markdown(self.site, loaded.record)

    # -- sitemap ---------------------------------------------------------------------------------------------

    def sitemap(self) -> None:
        """Render ``sitemap.xml`` (and its ``.gz``) again with the record pages among the pages."""
        env, nav, files = self.env, self.nav, self.all_files
        if env is None or nav is None or "sitemap.xml" not in self.config.theme.static_templates or not self.pages:
            return
        out = Path(self.config.site_dir) / "sitemap.xml"
        built = [f for f in files.documentation_pages() if f.page is not None]
        listed = sorted([*built, *self.files.values()], key=file_sort_key)  # the order MkDocs and gen-files keep
        context = get_context(nav, listed, self.config)
        output = env.get_template("sitemap.xml").render(context)
        utils.write_file(output.encode("utf-8"), str(out))
        timestamp = utils.get_build_timestamp(pages=[f.page for f in built if f.page is not None])
        with (
            open(f"{out}.gz", "wb") as fh,
            gzip.GzipFile(fileobj=fh, filename=f"{out}.gz", mode="wb", mtime=timestamp) as gz,
        ):
            gz.write(output.encode("utf-8"))
