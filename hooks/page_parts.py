"""The parts of hooks/record_pages.py that hold no build state (MkDocs-specific): the file type of a page MkDocs
does not build, a files view that records the links a page looked up, a warning counter, the table of contents as
plain data, and the small steps around a page's conversion."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink, TableOfContents

__all__ = [
    "RecordPageFile",
    "Recording",
    "Warnings",
    "found_file",
    "nav_pages",
    "quiet_logs",
    "read_text",
    "release",
    "toc_data",
    "toc_links",
]


class RecordPageFile(File):
    """A record page in MkDocs' files (links to it resolve and validate) that MkDocs does not build: its HTML is
    written by :class:`RecordPages`."""

    def __init__(self, src_uri: str, config: MkDocsConfig) -> None:
        super().__init__(
            src_uri,
            None,
            config.site_dir,
            config.use_directory_urls,
            dest_uri=src_uri.rsplit(".", 1)[0] + ".html",
        )
        self.edit_uri = None

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False

    def copy_file(self, dirty: bool = False) -> None:
        """Written by :meth:`RecordPages.render` (before MkDocs copies static files)."""

    def is_modified(self) -> bool:
        return True


def found_file(files: Files, path: str) -> File | None:
    """``files.get_file_from_path(path)``, looked up as given first: the paths a page's links name are source paths
    as MkDocs normalizes them, and its normalizing (a ``PurePath`` per call) was a tenth of a ``mkdocs serve``
    rebuild's record pages at 1,000 records (about eight links a page). A path held as given is the file MkDocs'
    look-up finds (a source path is its own normal form); a path in its normal form (``_NORMAL``) not held is not
    there (the 30,000 files a 10,000-record build registers, none there yet); any other is looked up as MkDocs does."""
    found = files.src_uris.get(path)
    if found is not None or _NORMAL.fullmatch(path):  # a path in its normal form not held: not there
        return found
    return files.get_file_from_path(path)


# a source path MkDocs' normalizing leaves as it is (PurePath(path).as_posix() == path): segments of these characters,
# none empty, "." or ".."; the generated pages and downloads (records/<experiment>/<id>.md) all have this form
_NORMAL = re.compile(r"(?!\.{1,2}(?:/|$))[A-Za-z0-9_.-]+(?:/(?!\.{1,2}(?:/|$))[A-Za-z0-9_.-]+)*")


class Recording(Files):
    """``files`` that remembers which paths a page's links looked up."""

    def __init__(self, inner: Files) -> None:  # no super().__init__: everything else is the inner collection's
        self._inner = inner
        self.asked: list[str] = []
        self.missed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __iter__(self) -> Iterator[File]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, path: str) -> bool:
        return path in self._inner

    def get_file_from_path(self, path: str) -> File | None:
        found = found_file(self._inner, path)
        self.asked.append(path)
        self.missed = self.missed or found is None
        return found


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def toc_data(items: list[AnchorLink]) -> list[dict[str, Any]]:
    return [{"title": a.title, "id": a.id, "level": a.level, "children": toc_data(a.children)} for a in items]


def toc_links(items: list[dict[str, Any]]) -> list[AnchorLink]:
    out = []
    for item in items:
        link = AnchorLink(item["title"], item["id"], item["level"])
        link.children = toc_links(item["children"])
        out.append(link)
    return out


def read_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def release(page: Page) -> None:
    """Drop what a page holds once its body is written or cached: a build holds one page's Markdown and HTML at a
    time, not all of them (each file keeps its last ``Page`` as ``file.page``; a forked converter that kept them
    grew by 600 MiB over 1,500 pages)."""
    page.content = page.markdown = None
    page.toc = TableOfContents([])


def quiet_logs() -> None:
    """In a forked converter: log nothing (the parent converts again, and reports, any page that warned)."""
    root = logging.getLogger()
    for logger in (root, logging.getLogger("mkdocs")):
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
    root.addHandler(logging.NullHandler())


def nav_pages(nav: Any) -> Iterator[str]:
    """Every page path named in ``mkdocs.yml``'s ``nav`` (those pages stay MkDocs' own)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
