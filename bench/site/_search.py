"""What the site's search finds (pure).

Readers search for experiments, variants, models, engines and dead ends, not for table cells. Hand-written pages
(dead ends included) are indexed in full by the generator's search. Generated pages (each record, each
configuration's history, each experiment, the indexes over them) are kept out of full-text search: their tables and
charts would make the index grow with every record (10.7 MB at 1,000 records when they were indexed). Instead each
experiment and each configuration gets one entry of its title and key fields, so the index grows with the number of
configurations, not of records; a record is found through its experiment's or configuration's page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bench.record.model import Record

from ._paths import EXPERIMENTS_INDEX, HISTORY_INDEX, RECORDS_INDEX, experiment_page, history_page
from ._site_data import SiteData

__all__ = ["GENERATED_DIRS", "SearchEntry", "full_text_indexed", "search_entries"]

# Folders (relative to the docs root) of generated pages: kept out of full-text search.
GENERATED_DIRS = ("records/", "history/", "experiments/")


@dataclass(frozen=True)
class SearchEntry:
    """One entry of the search index: a docs-relative page, its title and the words it is found by."""

    page: str
    title: str
    text: str


def full_text_indexed(page: str) -> bool:
    """True when the generator's search should index this docs-relative page's whole text."""
    return not page.startswith(GENERATED_DIRS)


def _words(values: Iterable[str | None]) -> str:
    seen: dict[str, None] = {}
    for v in values:
        if v:
            seen.setdefault(v, None)
    return ", ".join(seen)


def _key_fields(records: Iterable[Record]) -> list[str | None]:
    out: list[str | None] = []
    for r in records:
        engine = f"{r.server.engine} {r.server.version}" if r.server.version else r.server.engine
        spec = r.speculative.algorithm if r.speculative else None
        out += [r.variant, r.model.name, r.draft_model.name if r.draft_model else None, engine, spec]
        out += [r.environment.gpu.model, *r.tags]
    return out


def search_entries(site: SiteData) -> list[SearchEntry]:
    """Title-and-key-field entries for the generated pages (experiments, configurations, indexes)."""
    entries = [
        SearchEntry(RECORDS_INDEX, "Records", f"{len(site.records)} records in {len(site.experiments)} experiments"),
        SearchEntry(EXPERIMENTS_INDEX, "Experiments", _words(site.all_experiments)),
        SearchEntry(HISTORY_INDEX, "History", "every configuration's figures over time, regressions and improvements"),
    ]
    for exp in site.all_experiments:
        records = [lr.record for lr in site.experiments.get(exp, [])]
        dead_ends = [d.title for d in site.dead_ends_of(exp)]
        text = _words([*_key_fields(records), *dead_ends])
        entries.append(SearchEntry(experiment_page(exp), f"Experiment {exp}", text))
    for key, records in site.configurations.items():
        last = records[-1]
        title = f"History of {last.variant} in {last.experiment}"
        text = _words([last.experiment, key, *_key_fields([last]), f"{len(records)} records"])
        entries.append(SearchEntry(history_page(key), title, text))
    return entries
