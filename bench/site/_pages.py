"""Every generated file as (path, content) pairs: the one entry point for MkDocs (gen-files) and ``bench render``.

Paths are relative to the docs root. Pages are Markdown (``.md``); beside them lie the downloads: each record's raw
JSON and its levels as CSV, each experiment's and each configuration's rows as CSV and JSON (the rows of
:func:`bench.dataframe.frame`), and each comparison a page shows as CSV rows and JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from bench.md_table import md_table
from bench.record.load import LoadedRecord

from ._comparisons import comparison_downloads, experiment_comparison_downloads
from ._dead_ends import dead_ends_index
from ._escape import md_text
from ._experiment_page import experiment_downloads, experiment_markdown
from ._git_info import last_changed_line
from ._history_pages import history_downloads, history_index, history_pages
from ._markup import all_rows_line, errors_box, records_box
from ._page_inputs import (
    PageJob,
    configuration_key,
    experiment_key,
    fill_pages,
    kept_pages,
    records_list_key,
    start_build,
)
from ._paths import (
    DEAD_ENDS_INDEX,
    EXPERIMENTS_INDEX,
    HISTORY_INDEX,
    RECORDS_INDEX,
    all_rows_download,
    experiment_link,
    experiment_page,
    record_csv,
    record_json,
    record_page,
)
from ._record_page import site_record_markdown
from ._records_pages import RECORDS_PER_PAGE, experiment_record_lists, sharded_records_index
from ._records_table import records_table
from ._reliability import RELIABILITY_PAGE, reliability_markdown
from ._shortcodes import shortcode_comparisons
from ._site_data import SiteData
from ._site_records import raw_download_key
from ._text_parts import TextParts

__all__ = ["experiments_index", "records_index", "site_pages"]


def records_index(site: SiteData, per_page: int = RECORDS_PER_PAGE) -> str:
    page = RECORDS_INDEX
    n = len(site.records)
    if n > per_page:
        return sharded_records_index(site, per_page)
    parts = [
        "# Records",
        "",
        errors_box(site.errors),
        f"{n} record(s) in {len(site.experiments)} experiment(s). Click a column header to sort; "
        "the filters above the table narrow it by experiment, variant, engine or GPU.",
        "",
        last_changed_line(site.git, [r.record.id for r in site.records]),
        records_box(records_table(site, site.records, page, columns="full")),
        all_rows_line(page),
    ]
    return "\n".join(parts)


def experiments_index(site: SiteData) -> str:
    page = EXPERIMENTS_INDEX
    rows = []
    for exp in site.all_experiments:
        loaded = site.experiments.get(exp, [])
        latest = max((r.record.created_at for r in loaded), default=None)
        rows.append(
            [
                experiment_link(exp, page),
                str(len(loaded)),
                md_text(", ".join(r.variant for r in site.latest_per_variant(exp))) or "—",
                latest.strftime("%Y-%m-%d") if latest else "—",
                str(len(site.dead_ends_of(exp))),
            ]
        )
    table = md_table(["Experiment", "Records", "Variants", "Latest record", "Dead ends"], rows)
    return "# Experiments\n\n" + (table or "*No experiments yet.*") + "\n"


def _experiment_pages(site: SiteData, experiment: str) -> list[tuple[str, str]]:
    return [(experiment_page(experiment), experiment_markdown(site, experiment))]


def _history_pages(site: SiteData, configuration: str) -> list[tuple[str, str]]:
    return list(history_pages(site, configuration))


def _raw(loaded: LoadedRecord) -> tuple[str]:
    return (loaded.raw,)


def site_pages(
    site: SiteData, *, records_per_page: int = RECORDS_PER_PAGE, record_pages: bool = True, workers: int = 1
) -> Iterator[tuple[str, str | TextParts]]:
    """Every generated file as (docs-relative path, content): a string, or for the downloads of every record's rows
    :class:`TextParts`. ``record_pages=False``: without the record pages' Markdown (a generator adapter that renders
    them itself from :func:`site_record_markdown`, e.g. ``hooks/``). With a site cache, the experiments' and
    histories' pages it lacks are made first in ``workers`` processes (:func:`fill_pages`)."""
    start_build()
    experiments = {
        exp: PageJob(
            partial(experiment_key, site, exp),
            partial(_experiment_pages, site, exp),
            ahead=partial(experiment_comparison_downloads, site, exp),
        )
        for exp in site.all_experiments
    }
    histories = {
        key: PageJob(partial(configuration_key, site, key), partial(_history_pages, site, key))
        for key in site.configurations
    }
    # the regression flags of every configuration, which the experiments' and histories' pages and the history index
    # read: made here once, before fill_pages forks, not again in each process that makes pages
    site.configuration_flags  # noqa: B018  (a cached property: made and kept)
    fill_pages(site, [*experiments.values(), *histories.values()], workers)
    yield RECORDS_INDEX, records_index(site, records_per_page)
    if len(site.records) > records_per_page:  # the index split: each experiment's lists, kept as its pages are
        for exp in sorted(site.experiments):
            lists = partial(experiment_record_lists, site, exp, records_per_page)
            yield from kept_pages(site, partial(records_list_key, site, exp, records_per_page), lists)
    yield EXPERIMENTS_INDEX, experiments_index(site)
    yield DEAD_ENDS_INDEX, dead_ends_index(site.dead_ends, site.errors)
    yield HISTORY_INDEX, history_index(site)
    yield RELIABILITY_PAGE, reliability_markdown(site.reliability)
    for exp, job in experiments.items():  # their Markdown kept in the site cache under a key of their inputs
        yield from kept_pages(site, job.key, job.make)
        yield from experiment_downloads(site, exp)
    for key, job in histories.items():
        yield from kept_pages(site, job.key, job.make)
        yield from history_downloads(site, key)
    for loaded in site.records:
        r = loaded.record
        if record_pages:
            yield record_page(r), site_record_markdown(site, r)
        digest = getattr(loaded, "digest", None)  # the record file's path and bytes (a SiteRecord's cache key)
        yield record_json(r), TextParts(partial(_raw, loaded), raw_download_key(digest) if digest else None)
        yield record_csv(r), site.rows_download([r.id], "csv")
    everyone = [lr.record.id for lr in site.records]
    for kind in ("csv", "json"):  # keyed as any rows download (by the records' digests), never held whole
        rows = site.rows_download(everyone, kind)
        yield all_rows_download(kind), TextParts(key=rows.key, large=True, keyed=rows.keyed_parts)
    shown = {
        path: text for exp in site.experiments for path, text in experiment_comparison_downloads(site, exp).items()
    }
    for c in shortcode_comparisons(site):
        shown.update(comparison_downloads(c))
    yield from shown.items()
