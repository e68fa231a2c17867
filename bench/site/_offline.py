"""The built site must load nothing from outside: every ``src``/``href`` (and CSS ``url()``/``@import``)
in its HTML, CSS and SVG files must point inside the site, unless it starts with an allow-listed prefix.

Pure checking over text (:func:`check_html`, :func:`check_css`; in ``_offline_scan``, which worker processes load
alone) plus a folder walk (:func:`check_site`), over several processes where asked (``_offline_pool``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.atomic_write import write_atomic

from ._offline_pool import check_files
from ._offline_scan import (
    DEFAULT_ALLOW,
    URL_ATTRS,
    Violation,
    _check_html_fully,
    check_css,
    check_html,
    check_html_bytes,
    is_external,
)

__all__ = [
    "DEFAULT_ALLOW",
    "URL_ATTRS",
    "Violation",
    "_check_html_fully",
    "check_css",
    "check_html",
    "check_html_bytes",
    "check_site",
    "is_external",
]


_CHECKED = (".html", ".htm", ".css", ".svg")


def _files(site_dir: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """The site's HTML, CSS and SVG files (symbolic links to files included, linked folders not entered, as
    ``Path.rglob`` walks), each as its path relative to ``site_dir`` and its directory entry, in the order of
    ``sorted(site_dir.rglob("*"))``. A walk with ``os.scandir``: no path object or ``stat`` per file of another
    kind (at 10,000 records the site holds 30,000 files, two thirds of them downloads)."""
    found: list[tuple[str, os.DirEntry[str]]] = []

    def walk(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except PermissionError:  # as rglob: a folder it cannot list holds nothing
            return
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir() and not entry.is_symlink():
                    walk(entry.path, rel + "/")
                elif os.path.splitext(entry.name)[1].lower() in _CHECKED and entry.is_file():
                    found.append((rel, entry))
            except OSError:  # gone while walked
                continue

    walk(str(site_dir), "")
    found.sort(key=lambda f: f[0].split("/"))  # as paths sort: part by part
    return found


def check_site(
    site_dir: Path,
    allow: Sequence[str] = DEFAULT_ALLOW,
    *,
    cache_dir: Path | None = None,
    known: Mapping[str, tuple[str, int, int]] | None = None,
    workers: int = 1,
) -> list[Violation]:
    """Every external load in the built site's HTML, CSS and SVG files.

    Every file of every build is checked; with ``cache_dir`` (the site cache folder; None: off), a file whose exact
    bytes an earlier build found clean, with this check code and this allow list, is not parsed again: the sha256
    digests of the clean files are kept in ``cache_dir/offline/<key>.txt``, ``key`` a hash of this module's source
    and of ``allow``, rewritten atomically after each build with the files found clean in it. A file that loads
    something from outside is never kept, so it fails every build. ``known``: files whose bytes' sha256 the caller
    knows (``bench.site.Outputs.placed``: a site file linked to a kept file named by it), with the size and
    modification time they had then; such a file, unchanged since by both, is not read to be hashed. ``workers``: the
    processes the files are checked in (``bench.site._offline_pool``: fresh small ones, not forks of this one); the
    result is the same for any number."""
    store = _clean_store(cache_dir, allow)
    clean_before = _read_digests(store)
    known_files = known or {}
    clean: set[str] = set()
    todo: list[tuple[str, str]] = []
    for rel, entry in _files(site_dir):
        told = known_files.get(entry.path)
        kind = "css:" if rel.lower().endswith(".css") else "html:"
        if told is not None and _unchanged(entry, told) and kind + told[0] in clean_before:
            clean.add(kind + told[0])
        else:
            todo.append((entry.path, rel))
    found: list[Violation] = []
    for digest, violations in check_files(todo, clean_before, allow, workers):
        found += violations
        if not violations:
            clean.add(digest)
    if store is not None and clean != clean_before:
        with contextlib.suppress(OSError):  # a read-only or full disk costs speed, never the check
            write_atomic(store, "".join(f"{d}\n" for d in sorted(clean)), durable=False)
    return found


_CHECK_CODE = hashlib.sha256(  # the check's own code
    b"".join(Path(__file__).with_name(name).read_bytes() for name in ("_offline.py", "_offline_scan.py"))
).hexdigest()


def _clean_store(cache_dir: Path | None, allow: Sequence[str]) -> Path | None:
    if cache_dir is None:
        return None
    key = hashlib.sha256("\0".join((_CHECK_CODE, *allow)).encode()).hexdigest()
    return cache_dir / "offline" / f"{key[:32]}.txt"


def _read_digests(store: Path | None) -> frozenset[str]:
    if store is None:
        return frozenset()
    try:
        lines = store.read_text(encoding="ascii").split("\n")
    except (OSError, ValueError):
        return frozenset()
    return frozenset(line for line in lines if _DIGEST.fullmatch(line))


_DIGEST = re.compile(r"(?:css|html):[0-9a-f]{64}")


def _unchanged(entry: os.DirEntry[str], told: tuple[str, int, int]) -> bool:
    try:
        st = entry.stat()
    except OSError:
        return False
    return (st.st_size, st.st_mtime_ns) == told[1:]
