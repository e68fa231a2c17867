"""One page per record: its provenance, summary, level tables, charts, environment, server, workload and how to
measure it again; downloads of the raw JSON and of its levels as CSV (the rows of :func:`bench.dataframe.frame`).
:func:`site_record_markdown` adds what depends on the other records and on git."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bench.compare import environment_diff, render_diff_markdown
from bench.dataframe import frame_rows
from bench.figures import figure
from bench.level_order import sorted_levels
from bench.md_table import md_table
from bench.record.model import Record

from ._claims import claimed_mark, recipe_section
from ._concurrency_charts import ChartLine, concurrency_chart, percentile_chart
from ._environment import environment_rows, topology_block
from ._escape import front_matter_title, md_code, md_text
from ._failed_levels import record_failed_levels
from ._format import fmt_date
from ._git_info import commit_markdown, last_changed_line
from ._history_pages import history_link
from ._markup import chart_figure, downloads_line, fact
from ._paths import experiment_link, record_csv, record_json, record_link, record_page
from ._record_levels import level_sections, levels_table
from ._record_sections import (
    model_rows,
    observed_section_if_any,
    provenance_section,
    server_section,
    status_section,
    workload_section,
)
from ._site_data import SiteData
from ._site_style import SITE_STYLE
from ._tradeoff_chart import per_gpu, tradeoff_chart

__all__ = ["record_markdown", "site_record_markdown"]

CHART_GROUPS = (
    ("throughput", "Throughput vs concurrency", "Throughput (tok/s)", ("output_throughput", "total_throughput")),
    (
        "per-request",
        "Per-request tok/s vs concurrency",
        "Per-request tok/s",
        ("per_request_tok_s", "per_request_tok_s_e2e"),
    ),
)


def _charts(record: Record) -> str:
    parts = []
    for key, title, y_title, keys in CHART_GROUPS:
        specs = [figure(k) for k in keys]
        lines: list[ChartLine] = [
            (spec.heading, record, spec) for spec in specs if any(spec.value(lv) is not None for lv in record.levels)
        ]
        if lines:
            parts.append(chart_figure(concurrency_chart(lines, title=title, y_title=y_title, chart_id=f"chart-{key}")))
    unit = "per GPU" if per_gpu([record]) else "per server"
    tradeoff = tradeoff_chart(
        [(record.variant, record)], title=f"Throughput {unit} vs per-request speed", chart_id="chart-tradeoff"
    )
    if not tradeoff.empty:
        parts.append(chart_figure(tradeoff, "Points labelled by concurrency; ringed points form the Pareto front."))
    for key in ("ttft_ms", "tpot_ms"):
        label = figure(key).label
        chart = percentile_chart(
            [(record.variant, record)],
            key,
            title=f"{label} p50 / p90 / p99 vs concurrency",
            y_title=f"{label} (ms)",
            chart_id=f"chart-{key}",
        )
        if not chart.empty:
            parts.append(chart_figure(chart))
    return ("## Charts\n\n" + "\n".join(parts)) if parts else ""


def record_markdown(
    record: Record,
    *,
    rows: Sequence[Mapping[str, Any]] | None = None,
    summary_rows: Sequence[list[str]] = (),
    note: str = "",
    sections: Sequence[str] = (),
) -> str:
    """The whole record page (Markdown).

    ``rows``: the record's rows of :func:`bench.dataframe.frame_rows` (computed here when not given; the site
    passes those its CSV download is written from). What depends on the other records and on git
    (:func:`site_record_markdown`) comes in as Markdown: ``summary_rows`` extend the summary table, ``note`` goes
    under the downloads line, ``sections`` at the end.
    """
    page = record_page(record)
    levels = sorted_levels(record.levels)
    rows = frame_rows([record]) if rows is None else rows
    between, figure_notes = level_sections(levels)
    sp = record.speculative
    bb = record.benchbook
    summary = [
        ["Id", md_code(record.id)],
        ["Experiment", experiment_link(record.experiment, page)],
        ["Variant", md_text(record.variant)],
        ["Created", fmt_date(record.created_at)],
        ["Provenance", md_text(record.provenance.kind)],
        ["Status", md_text(record.status.state)],
        [
            "Engine",
            md_text(record.server.engine + (f" {record.server.version}" if record.server.version else ""))
            + claimed_mark(record, "server.engine"),
        ],
        *model_rows(record, record.model, "Model", "model"),
        *model_rows(record, record.draft_model, "Draft model", "draft_model"),
        [
            "Speculative decoding",
            (md_text(sp.algorithm) if sp and sp.algorithm else "none") + claimed_mark(record, "speculative.algorithm"),
        ],
    ]
    if sp is not None and sp.algorithm:
        summary += [
            ["Speculative steps", fact(sp.num_steps) + claimed_mark(record, "speculative.num_steps")],
            ["Speculative topk", fact(sp.topk) + claimed_mark(record, "speculative.topk")],
            ["Draft tokens", fact(sp.num_draft_tokens) + claimed_mark(record, "speculative.num_draft_tokens")],
            *[
                [md_code(k), md_text(json.dumps(v)) + claimed_mark(record, f"speculative.extra.{k}")]
                for k, v in sorted(sp.extra.items())
            ],
        ]
        if sp.notes:
            summary.append(["Speculation notes", md_text(sp.notes)])
    summary += [
        [
            "benchbook",
            fact(" ".join(x for x in (bb.version, bb.commit) if x) or None)
            + (" (uncommitted changes)" if bb.dirty else ""),
        ],
        ["Run group", fact(record.run_group)],
        ["Tags", md_text(", ".join(record.tags)) if record.tags else "none"],
        *summary_rows,
    ]
    out = [
        front_matter_title(record.title or record.id) + f"# {md_text(record.title or record.id)}",
        "",
        provenance_section(record),
        status_section(record),
    ]
    if record.description:
        out += [md_text(record.description), ""]
    out += [
        downloads_line(
            page, "this record", [("raw JSON record", record_json(record)), ("levels as CSV", record_csv(record))]
        ),
        *([note] if note else []),
        "## Summary",
        "",
        md_table(["Field", "Value"], summary),
        "",
        "## Levels",
        "",
        *[box for box in (record_failed_levels(levels),) if box],
        levels_table(levels, rows) if levels else "*This record has no levels.*",
        "",
        between,
        _charts(record),
        figure_notes,
        "## Environment",
        "",
        md_table(
            ["Field", "Value"],
            [list(r) for r in environment_rows(record.environment, claimed=lambda f: claimed_mark(record, f))],
        ),
        "",
        *(part for part in (topology_block(record.environment),) if part),
        server_section(record),
        *(part for part in (observed_section_if_any(record),) if part),
        workload_section(record),
        *(part for part in (recipe_section(record),) if part),
        *sections,
    ]
    return "\n".join(part for part in out if part is not None).rstrip() + "\n"


def _previous_diff_section(site: SiteData, record: Record) -> str:
    page = record_page(record)
    prev = site.previous_in_configuration(record)
    head = "## Changes since the previous record of this configuration\n\n"
    if prev is None:
        return head + "First record of this configuration (same variant and context fingerprint): nothing to diff.\n"
    intro = (
        f"Every field in which {record_link(prev, page)} (the previous record of this configuration) "
        "and this record differ.\n\n"
    )
    return head + intro + render_diff_markdown(environment_diff(prev, record), "previous", "this record", SITE_STYLE)


def site_record_markdown(site: SiteData, record: Record) -> str:
    """The record page with what the site knows beyond the record: the commit that added it, its configuration's
    history, and the diff against the previous record of its configuration."""
    page = record_page(record)
    rows: list[list[str]] = []
    if site.git.available:
        rows.append(["Added in commit", commit_markdown(site.git.of(record.id), site.git.repository_url)])
    key = site.configuration_of.get(record.id)
    if key is not None:
        rows.append(
            ["Configuration", f"fingerprint {md_code(site.fingerprint_of(record))}: {history_link(site, record, page)}"]
        )
    return record_markdown(
        record,
        rows=site.rows_of([record.id]),
        summary_rows=rows,
        note=last_changed_line(site.git, [record.id]),
        sections=[_previous_diff_section(site, record)],
    )
