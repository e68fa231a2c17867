"""What an experiment's page and a configuration's history pages are made from, as a key: their Markdown is kept in
the site cache under it, so a build (a ``mkdocs serve`` rebuild after one new record above all) makes again only
the pages whose inputs changed (pure; the cache's folder names benchbook's code version).

Profiled warm at 1,000 records, making these pages' Markdown took most of a build once their bodies were cached:
comparisons, charts, diffs and regression flags, again for every experiment on every build. Their inputs, read off
the renderers (``_experiment_page``, ``_history_pages``):

* an experiment's page: its records and every record of a configuration (``variant@fingerprint``, which may span
  experiments) that holds one of them (tables, history rows and flags, comparisons of the latest records with their
  repeats), each by its digest as loaded; their git commits; the dead ends of the experiment; the settings;
* an experiment's record lists (the records index split past one page): its records by digest, their commits, the
  settings (their rows' figures), the page size;
* a configuration's history pages: its records by digest (their rows, flags and links; the experiments' pages are
  linked by name only), their git commits, the settings. Not the other records of their experiments: with them, one
  new record made every configuration of its experiment again (at 1,000 synthetic records, 52 history pages
  converted on a ``mkdocs serve`` rebuild after one new record).

The tests change one thing at a time (a record of another experiment, a new record, the settings, a dead end, a
commit) and check that every page whose key stayed the same has the same Markdown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from bench.record.model import Record

from ._between_builds import Carried
from ._site_data import SiteData
from ._workers import CHUNKED_RESIDENT_MAX, FORK_RESIDENT_MAX, forks, in_workers

__all__ = [
    "PageJob",
    "configuration_key",
    "experiment_key",
    "fill_pages",
    "kept_pages",
    "records_list_key",
    "start_build",
]

KIND = "markdown"  # a namespace inside the keys (they share the cache's page folder)
MIN_PARALLEL = 4  # fewer pages to make than this (a `mkdocs serve` rebuild after one new record makes 2): no fork
# Jobs per forked child where the build holds more than FORK_RESIDENT_MAX (10,000 records): each child gives back
# what it copied of the parent's memory after this many experiments' or configurations' pages
JOBS_PER_CHILD = 10

Made = list[tuple[str, str]]  # pages as (docs-relative path, Markdown)


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def _key(site: SiteData, kind: str, name: str, records: Iterable[Record], extra: Sequence[Any] = ()) -> str:
    ids = sorted({r.id: r for r in records}.values(), key=lambda r: r.id)
    parts = {
        "kind": [KIND, kind, name],
        "settings": site.settings.model_dump(mode="json"),
        "repository": site.git.repository_url,
        "git": site.git.available,
        "records": [[r.id, site.digest(r), _plain(site.git.of(r.id))] for r in ids],
        "extra": [_plain(x) for x in extra],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def experiment_key(site: SiteData, experiment: str) -> str:
    """The key of the experiment's page (see the module's docstring)."""
    own = [lr.record for lr in site.experiments.get(experiment, [])]
    keys = {site.configuration_of.get(r.id) for r in own}
    related = [r for key in sorted(k for k in keys if k) for r in site.configurations.get(key, [])]
    return _key(site, "experiment", experiment, [*own, *related], site.dead_ends_of(experiment))


def records_list_key(site: SiteData, experiment: str, per_page: int) -> str:
    """The key of the experiment's record lists (the records index split past ``per_page`` records): its records,
    their commits, the settings (their rows' figures), the page size."""
    records = [lr.record for lr in site.experiments.get(experiment, [])]
    return _key(site, "records-list", experiment, records, [per_page])


def configuration_key(site: SiteData, configuration: str) -> str:
    """The key of the configuration's history pages (see the module's docstring)."""
    return _key(site, "configuration", configuration, site.configurations.get(configuration, []))


@dataclass
class PageJob:
    """Pages made together (an experiment's page, a configuration's history pages): the key of their inputs
    (computed once, when first asked for) and how they are made."""

    key_of: Callable[[], str]
    make: Callable[[], Made]
    # more work for the same inputs that leaves its result in the site cache (an experiment's comparison downloads),
    # done with the pages where they are made ahead (fill_pages)
    ahead: Callable[[], object] | None = None
    _key: str | None = None

    def key(self) -> str:
        if self._key is None:
            self._key = self.key_of()
        return self._key


def _remember(site: SiteData, key: str, made: Made) -> None:
    assert site.cache is not None
    site.cache.remember_page(key, {"pages": [[path, text] for path, text in made]})


def fill_pages(site: SiteData, jobs: Sequence[PageJob], workers: int) -> int:
    """Make the pages the site cache lacks in ``workers`` processes (``bench.site.in_workers``), into the cache,
    where :func:`kept_pages` finds them (a page a child could not make, e.g. one that fails, is made there again and
    fails there); returns the children that ended well. On a cold build of 1,000 records the experiments' and
    histories' pages took most of the generator's time in one process.

    A build holding more than ``FORK_RESIDENT_MAX`` (10,000 records) forks children of :data:`JOBS_PER_CHILD` jobs
    each (``in_workers``'s ``per_child``), as the record pages do, up to ``CHUNKED_RESIDENT_MAX``: one child for all
    of them took such a build to 1,971 MiB."""
    cache = site.cache
    if cache is None or not forks(workers, CHUNKED_RESIDENT_MAX):  # made in this process as they are asked for
        return 0
    missing = [job for job in jobs if job.key() not in _KEPT and not cache.has_page(job.key())]
    if len(missing) < MIN_PARALLEL:
        return 0
    per_child = None if forks(workers, FORK_RESIDENT_MAX) else JOBS_PER_CHILD

    def make(share: Sequence[PageJob]) -> None:
        for job in share:
            _remember(site, job.key(), job.make())
            if job.ahead is not None:
                job.ahead()

    return in_workers(
        missing, make, workers, child_setup=lambda: None, max_resident=CHUNKED_RESIDENT_MAX, per_child=per_child
    )


def kept_pages(site: SiteData, key: Callable[[], str], make: Callable[[], Made]) -> Made:
    """``make()`` (pages as (docs-relative path, Markdown)), or what it gave under ``key()`` in the site cache
    (the key is computed only when there is a cache)."""
    cache = site.cache
    if cache is None:
        return make()
    key_ = key()
    if (carried := _KEPT.get(key_)) is not None:  # the last build of this process made them (mkdocs serve)
        return carried
    found = cache.page(key_)
    pages = found.get("pages") if found is not None else None
    if isinstance(pages, list) and all(isinstance(p, list) and len(p) == 2 for p in pages):
        made = [(str(path), str(text)) for path, text in pages]
    else:
        made = make()
        _remember(site, key_, made)
    _KEPT.put(key_, made)
    return made


def start_build() -> None:
    """A new build: what the last one kept is what the one before it made (``mkdocs serve`` keeps one build's)."""
    _KEPT.turn()


# Page key -> the pages made, by the last build of this process (carried under ``mkdocs serve``)
_KEPT: Carried[str, Made] = Carried()
