"""Every generated page as (path, content) pairs: the one entry point for MkDocs (gen-files) and ``bench render``.

Paths are relative to the docs root; contents are Markdown (``.md``), the record's raw JSON (``.json``)
and its levels as CSV (``.csv``).
"""

from __future__ import annotations

from collections.abc import Iterator

from .blocks import dead_end_summary, errors_box, experiment_link, records_table
from .data import SiteData
from .deadends import DeadEnd, DeadEndError
from .escape import md_text
from .experiment_page import experiment_charts, experiment_markdown
from .gitinfo import last_changed_line
from .history import history_index, history_markdown
from .paths import (
    DEAD_ENDS_INDEX,
    EXPERIMENTS_INDEX,
    HISTORY_INDEX,
    RECORDS_INDEX,
    experiment_page,
    history_page,
    link,
    record_csv,
    record_json,
    record_page,
)
from .record_extras import site_record_markdown
from .record_page import levels_csv
from .reliability import RELIABILITY_PAGE, reliability_markdown
from .tables import md_table

__all__ = [
    "dead_end_page",
    "dead_ends_index",
    "experiment_charts",
    "experiment_markdown",
    "experiments_index",
    "records_index",
    "site_pages",
]

FILTER_COLUMNS = "Experiment,Variant,Engine,GPU"


def records_index(site: SiteData) -> str:
    page = RECORDS_INDEX
    n = len(site.records)
    parts = [
        "# Records",
        "",
        errors_box(site.errors),
        f"{n} record(s) in {len(site.experiments)} experiment(s). Click a column header to sort; "
        "the filters above the table narrow it by experiment, variant, engine or GPU.",
        "",
        last_changed_line(site.git, [r.record.id for r in site.records]),
        f'<div class="bench-records" data-filters="{FILTER_COLUMNS}" markdown>',
        "",
        records_table(site.records, page, columns="full", git=site.git),
        "",
        "</div>",
        "",
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


def dead_ends_index(site: SiteData) -> str:
    page = DEAD_ENDS_INDEX
    rows = [
        [
            d.meta.date.isoformat(),
            f"[{md_text(d.title)}]({link(page, d.path)})",
            experiment_link(d.meta.experiment, page),
            md_text(d.meta.status),
            md_text(d.meta.decision),
        ]
        for d in site.dead_ends
    ]
    intro = (
        "Approaches that were tried and given up, with the reason and the decision taken, so nobody walks into them "
        "again unawares. Each is a page under `docs/dead-ends/` with validated front matter."
    )
    bad = [e for e in site.errors if isinstance(e, DeadEndError)]
    table = md_table(["Date", "Dead end", "Experiment", "Status", "Decision"], rows) or "*No dead ends recorded.*"
    return "\n".join(["# Dead ends", "", errors_box(bad), intro, "", table, ""])


def site_pages(site: SiteData) -> Iterator[tuple[str, str]]:
    """Every generated file as (docs-relative path, content)."""
    yield RECORDS_INDEX, records_index(site)
    yield EXPERIMENTS_INDEX, experiments_index(site)
    yield DEAD_ENDS_INDEX, dead_ends_index(site)
    yield HISTORY_INDEX, history_index(site)
    yield RELIABILITY_PAGE, reliability_markdown(site.reliability)
    for exp in site.all_experiments:
        yield experiment_page(exp), experiment_markdown(site, exp)
    for key in site.configurations:
        yield history_page(key), history_markdown(site, key)
    for loaded in site.records:
        r = loaded.record
        yield record_page(r), site_record_markdown(site, r)
        yield record_json(r), loaded.raw
        yield record_csv(r), levels_csv(r)


def dead_end_page(markdown: str, dead_end: DeadEnd, site: SiteData) -> str:
    """A dead-end page's Markdown with its front-matter summary box placed under the title."""
    box = dead_end_summary(dead_end, site, dead_end.path)
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], "", box, *lines[i + 1 :]])
    return box + "\n" + markdown
