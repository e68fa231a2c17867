"""Record pages without the generator's per-page pipeline (pure): what a page's body depends on, and the theme's
page shell filled with it.

Profiled at 1,000 records, a site build spent most of its time on the record pages: making each page's Markdown,
converting it, and rendering the theme's page template around it, once per record and again on every
``mkdocs serve`` rebuild. The generator adapter (``hooks/``) instead

* keys each record page's body by :func:`record_page_key` (everything :func:`site_record_markdown` reads: the
  record, its rows' confidence, the previous record of its configuration, its git commit line, its configuration's
  fingerprint and history link, and benchbook's code through the cache's folder) and keeps the converted body in
  :class:`bench.site.SiteCache`, so an unchanged record costs a cache read;
* keys every other generated page that is not in the navigation (experiments, configurations' histories, the
  records index's parts) by :func:`generated_page_key`: its Markdown as the generator script wrote it, so an
  unchanged page costs a hash and a cache read rather than shortcodes, prerendering and Markdown conversion;
* renders the theme's page template once per :class:`Shell` shape (the page's folder, the table of contents'
  structure) with sentinels where the page's own text goes, and fills it per page (:meth:`Shell.fill`).

Nothing here imports a generator; the sentinels are plain words no page holds. ``$BENCHBOOK_RECORD_PAGES=generator``
sends the record pages and the other generated pages through the generator's own pipeline again
(:func:`direct_record_pages` is False): slower, the same pages (the tests build both ways and compare).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.record.load import LoadedRecord

from ._git_info import commit_markdown, last_changed_line
from ._history_pages import history_link
from ._paths import record_page
from ._site_data import SiteData

__all__ = [
    "CONTENT_SENTINEL",
    "FOLDER_SENTINEL",
    "H1_URL_SENTINEL",
    "HEADING_SENTINEL",
    "NAME_SENTINEL",
    "RECORD_PAGES_ENV",
    "TITLE_SENTINEL",
    "Shell",
    "ShellError",
    "direct_record_pages",
    "generated_page_key",
    "record_page_key",
    "shell_key",
    "shell_page",
    "toc_shape",
]

TITLE_SENTINEL = "benchshellpagetitlesentinel"
CONTENT_SENTINEL = "benchshellpagecontentsentinel"
H1_URL_SENTINEL = "#benchshellheadingsentinel"
# The top-level heading's text in the table of contents: themes leave it out (a shell holding it is refused).
HEADING_SENTINEL = "benchshellheadingtextsentinel"
# The page's file name (without its extension) in the shell's page path: records/<folder>/<NAME_SENTINEL>.md.
NAME_SENTINEL = "benchshellpagenamesentinel"
FOLDER_SENTINEL = "benchshellpagefoldersentinel"  # the innermost folder (``shell_page(..., any_folder=True)``)


RECORD_PAGES_ENV = "BENCHBOOK_RECORD_PAGES"


def direct_record_pages() -> bool:
    """Whether the generator adapter renders the record pages itself (the default) rather than handing their
    Markdown to the generator (``$BENCHBOOK_RECORD_PAGES=generator``)."""
    return os.environ.get(RECORD_PAGES_ENV, "").strip().lower() != "generator"


class ShellError(ValueError):
    """The rendered template does not hold the sentinels as a shell needs (the theme printed one in a way this
    module cannot fill): the page is rendered whole instead."""


def record_page_key(site: SiteData, loaded: LoadedRecord, renderer: str) -> str:
    """A hash of everything the record page of ``loaded`` is made from (see the module docstring); ``renderer``:
    what the generator adds (its Markdown configuration and versions, the adapter's own code)."""
    record = loaded.record
    page = record_page(record)
    prev = site.previous_in_configuration(record)
    parts = {
        "page": page,
        "record": site.digest(record),
        "confidence": site.settings.comparison.confidence,
        "previous": [prev.id, record_page(prev), site.digest(prev)] if prev is not None else None,
        "git": [site.git.available, commit_markdown(site.git.of(record.id), site.git.repository_url)],
        "changed": last_changed_line(site.git, [record.id]),
        "configuration": site.configuration_of.get(record.id),
        "fingerprint": site.fingerprint_of(record),
        "history": history_link(site, record, page),
        "renderer": renderer,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def generated_page_key(page: str, markdown: str, renderer: str) -> str | None:
    """A hash of everything the body of the generated page ``page`` is made from: its Markdown, the generator's
    configuration and code (``renderer``) and benchbook's code (through the cache's folder). None (not to be
    cached) for a page holding a shortcode (``<!-- bench:``): what that expands to depends on the whole site."""
    if "<!-- bench:" in markdown:
        return None
    return hashlib.sha256("\0".join(("generated", page, renderer, markdown)).encode("utf-8")).hexdigest()


def shell_key(
    page: str,
    toc: Sequence[Mapping[str, object]],
    has_h1: bool,
    *,
    any_folder: bool = False,
    shape: str | None = None,
) -> str:
    """What decides a page's shell: its folder (:func:`shell_page`), its table of contents with a top-level
    heading's text and anchor left out (they are filled per page: :func:`toc_shape`, given as ``shape`` where the
    caller kept it), and whether the body holds a top-level heading."""
    shown = json.dumps([shell_page(page, any_folder=any_folder), has_h1])
    return f"{shown[:-1]}, {toc_shape(toc) if shape is None else shape}]"


def toc_shape(toc: Sequence[Mapping[str, object]]) -> str:
    """The part of a page's table of contents that its shell depends on (every entry but a top-level heading's text
    and anchor), as text: the same for every record page with the same sections."""

    def shape(items: Sequence[Mapping[str, object]], top: bool) -> list[object]:
        out: list[object] = []
        for i, item in enumerate(items):
            children = item.get("children") or []
            assert isinstance(children, list)
            if top and i == 0 and item.get("level") == 1:
                out.append([1, None, None, shape(children, False)])
            else:
                out.append([item.get("level"), item.get("id"), item.get("title"), shape(children, False)])
        return out

    return json.dumps(shape(toc, True))


def shell_page(page: str, *, any_folder: bool = False) -> str:
    """The page path a shell is rendered for: ``page``'s folder (links from the theme's navigation are relative
    to it) and a sentinel file name. ``any_folder``: the innermost folder a sentinel too, so that one shell serves
    every folder beside it; right only where the theme links to nothing inside such a folder (the adapter knows)."""
    if "/" not in page:
        return f"{NAME_SENTINEL}.md"
    folder = page.rsplit("/", 1)[0]
    if any_folder:
        folder = "/".join([*folder.split("/")[:-1], FOLDER_SENTINEL])
    return f"{folder}/{NAME_SENTINEL}.md"


@dataclass(frozen=True)
class Shell:
    """A rendered page template split at its sentinels."""

    parts: tuple[str, ...]  # text between the sentinels
    slots: tuple[str, ...]  # which sentinel sat between parts[i] and parts[i + 1]: content, title, h1, name

    @classmethod
    def parse(cls, rendered: str, *, content_marker: str) -> Shell:
        """Split ``rendered`` (the template rendered with the sentinels; ``content_marker``: what was given as the
        page's content) at the sentinels; ShellError unless the content sits there exactly once."""
        if "\0" in rendered:
            raise ShellError("the rendered template holds a NUL character")
        if rendered.count(content_marker) != 1:
            raise ShellError("the page's content is not in the rendered template exactly once")
        rendered = rendered.replace(content_marker, "\0content\0")
        sentinels = (("title", TITLE_SENTINEL), ("h1", H1_URL_SENTINEL), ("name", NAME_SENTINEL))
        for name, sentinel in (*sentinels, ("folder", FOLDER_SENTINEL)):
            rendered = rendered.replace(sentinel, f"\0{name}\0")
        pieces = rendered.split("\0")
        if "benchshell" in "".join(pieces[0::2]).lower():
            raise ShellError("a sentinel is left in the shell in a form this module cannot fill")
        return cls(tuple(pieces[0::2]), tuple(pieces[1::2]))

    def fill(self, *, page: str, title: str, h1_url: str, content: str) -> str:
        """The page: ``page`` (docs-relative path, in the shell's folder), its title, top-level heading anchor
        (``#id``) and body HTML."""
        *folders, file_name = page.split("/")
        values = {"content": content, "title": title, "h1": h1_url, "name": file_name.rsplit(".", 1)[0]}
        values["folder"] = folders[-1] if folders else ""
        out = [self.parts[0]]
        for slot, part in zip(self.slots, self.parts[1:], strict=True):
            out += (values[slot], part)
        return "".join(out)
