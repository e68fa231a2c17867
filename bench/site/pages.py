"""Every generated page as (path, content) pairs: the one entry point for MkDocs (gen-files) and ``bench render``.

Paths are relative to the docs root; contents are Markdown (``.md``), the record's raw JSON (``.json``)
and its levels as CSV (``.csv``).
"""

from __future__ import annotations

from collections.abc import Iterator

from .blocks import (
    chart_figure,
    dead_end_summary,
    dead_ends_list,
    environment_table,
    errors_box,
    experiment_link,
    records_table,
)
from .chartdata import concurrency_chart
from .data import SiteData
from .deadends import DeadEnd, DeadEndError
from .escape import md_text
from .metrics import CHART_METRICS, metric_spec
from .paths import (
    DEAD_ENDS_INDEX,
    EXPERIMENTS_INDEX,
    RECORDS_INDEX,
    experiment_page,
    link,
    record_csv,
    record_json,
    record_page,
)
from .record_page import levels_csv, record_markdown
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
        f'<div class="bench-records" data-filters="{FILTER_COLUMNS}" markdown>',
        "",
        records_table(site.records, page, columns="full"),
        "",
        "</div>",
        "",
    ]
    return "\n".join(parts)


def experiment_charts(site: SiteData, experiment: str, metric_key: str, *, chart_id: str | None = None) -> str:
    """One metric against concurrency, the latest record of every variant overlaid."""
    spec = metric_spec(metric_key)
    records = site.latest_per_variant(experiment)
    lines = [(r.variant, r, spec) for r in records]
    chart = concurrency_chart(
        lines,
        title=f"{spec.label} vs concurrency — {experiment}",
        y_title=spec.title,
        chart_id=chart_id or f"chart-{experiment}-{metric_key}",
    )
    if chart.empty:
        what = md_text(spec.label.lower())
        return f"*No record of experiment {md_text(experiment)} states {what}, so there is no chart.*\n"
    variants = ", ".join(r.variant for r in records)
    return chart_figure(chart, f"{spec.label} against concurrency, latest record of each variant ({variants}).")


def experiment_markdown(site: SiteData, experiment: str) -> str:
    page = experiment_page(experiment)
    loaded = site.experiments.get(experiment, [])
    latest = site.latest_per_variant(experiment)
    variants = ", ".join(r.variant for r in latest)
    parts = [
        f"# Experiment: {md_text(experiment)}",
        "",
        f"{len(loaded)} record(s); variants: {md_text(variants) or 'none'}.",
        "",
        "## Records",
        "",
        records_table(loaded, page, columns="short"),
        "",
    ]
    charts = [
        experiment_charts(site, experiment, key)
        for key in CHART_METRICS
        if any(metric_spec(key).figure(lv) is not None for r in latest for lv in r.levels)
    ]
    if charts:
        parts += [
            "## Charts",
            "",
            "Every variant is overlaid (its latest record); older records have their own pages.",
            "",
            *charts,
        ]
    if latest:
        parts += ["## Environment", "", environment_table(latest, page), ""]
    parts += ["## Dead ends", "", dead_ends_list(site.dead_ends_of(experiment), page), ""]
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
    for exp in site.all_experiments:
        yield experiment_page(exp), experiment_markdown(site, exp)
    for loaded in site.records:
        r = loaded.record
        yield record_page(r), record_markdown(r)
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
