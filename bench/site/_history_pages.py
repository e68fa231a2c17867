"""History pages: one per configuration (variant + fingerprint), its records over time and its flags.

Configurations, their time order and the regression / improvement flags all come from ``bench.compare``
(``history`` and ``flags``, thresholds from ``benchbook.yaml``); this module lays them out. A figure with too
few earlier records is shown as "insufficient data", never as fine. A failed level (``Level.failure``) is not in
any series: its cell reads "failed".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bench.compare import Flag, recorded_at
from bench.dataframe import frame_json
from bench.figures import COMPARED, Figure, figure, format_figure
from bench.level_order import level_name, sorted_levels
from bench.md_table import md_table
from bench.record.model import Level, Record

from ._escape import md_code, md_text
from ._git_info import commit_markdown, last_changed_line
from ._markup import all_rows_line, downloads_line, scroll_box
from ._paths import HISTORY_INDEX, experiment_link, history_download, history_page, link, record_link
from ._site_data import SiteData

__all__ = [
    "configuration_status",
    "history_downloads",
    "history_index",
    "history_link",
    "history_markdown",
    "thresholds_sentence",
]

KIND_TEXT = {
    "regression": "regression",
    "improvement": "improvement",
    "unconfirmed": "unconfirmed change",
    "insufficient_data": "insufficient data",
}


def thresholds_sentence(site: SiteData) -> str:
    t = site.settings.regression
    return (
        f"A figure is flagged when it moves more than {t.ratio_threshold:.0%} from the median of the previous "
        f"{t.window} records of this configuration and the next record confirms the move; with fewer than "
        f"{t.min_history} earlier records the answer is *insufficient data* (settings: `benchbook.yaml`, "
        "section `regression`)."
    )


def configuration_status(flags: Sequence[Flag]) -> str:
    """'2 regressions, 1 insufficient data', or 'no lasting change' when no flag is raised."""
    counts: dict[str, int] = {}
    for f in flags:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    if not counts:
        return "no lasting change"
    return ", ".join(f"{n} {KIND_TEXT[k]}" for k, n in sorted(counts.items()))


def history_link(site: SiteData, record: Record, page: str) -> str:
    key = site.configuration_of.get(record.id)
    if key is None:
        return ""
    n = len(site.configurations[key])
    return f"[history of this configuration]({link(page, history_page(key))}) ({n} record(s))"


def _levels(records: Sequence[Record]) -> list[Level]:
    seen: dict[str, Level] = {}
    for r in records:
        for lv in r.levels:
            seen.setdefault(lv.key, lv)
    return sorted_levels(seen.values())


Cells = Mapping[tuple[str, str], Mapping[str, Any]]  # (record id, level key) -> its frame row


def _figures_table(records: Sequence[Record], spec: Figure, page: str, cells: Cells) -> str:
    """The figure of each record (newest first) at each level, from the frame rows; a failed level reads failed."""

    def value(r: Record, key: str) -> float | None:
        row = cells.get((r.id, key))
        return None if row is None or row["level_failure"] is not None else row[spec.key]

    def failed(r: Record, key: str) -> bool:
        row = cells.get((r.id, key))
        return row is not None and row["level_failure"] is not None

    all_levels = _levels(records)
    if not any(value(r, lv.key) is not None for r in records for lv in all_levels):
        return ""
    levels = [lv for lv in all_levels if any(value(r, lv.key) is not None or failed(r, lv.key) for r in records)]
    rows = []
    for r in reversed(records):  # newest first
        row = []
        for lv in levels:
            v = value(r, lv.key)
            row.append("*failed*" if failed(r, lv.key) else format_figure(v))
        rows.append([recorded_at(r).strftime("%Y-%m-%d %H:%M"), record_link(r, page), *row])
    header = ["Measured (UTC)", "Record", *(md_text(level_name(lv)) for lv in levels)]
    return scroll_box(md_table(header, rows, align="ll" + "r" * len(levels)))


def _flags_table(flags: Sequence[Flag], site: SiteData, page: str, records: Sequence[Record]) -> str:
    if not flags:
        return "No lasting change beyond the threshold."
    names = {lv.key: level_name(lv) for lv in _levels(records)}
    rows = []
    for f in flags:
        lr = site.by_id.get(f.record_id)
        rec = record_link(lr.record, page) if lr else md_code(f.record_id)
        kind = KIND_TEXT[f.kind]
        rows.append(
            [
                f"**{kind}**" if f.kind in ("regression", "improvement") else kind,
                md_text(figure(f.metric).label),
                md_text(names.get(f.level, f.level)),
                rec,
                "—" if f.ratio is None else f"{f.ratio:.2f}×",
                md_text(f.message),
            ]
        )
    return md_table(["Finding", "Figure", "Level", "At record", "vs window median", "Detail"], rows)


def history_markdown(site: SiteData, key: str) -> str:
    """The history page of one configuration (``variant@fingerprint``)."""
    page = history_page(key)
    records = site.configurations[key]
    variant, _, fp = key.rpartition("@")
    experiments = sorted({r.experiment for r in records})
    flags = site.configuration_flags.get(key, [])
    first, last = recorded_at(records[0]), recorded_at(records[-1])
    parts = [
        f"# History: {md_text(variant)} @ {fp}",
        "",
        f"Every record of variant {md_code(variant)} with context fingerprint {md_code(fp)} "
        f"(experiment: {', '.join(experiment_link(e, page) for e in experiments)}), in time order: "
        f"{len(records)} record(s), {first:%Y-%m-%d} to {last:%Y-%m-%d}. Records with the same fingerprint and "
        "variant were measured in the same context (see the methodology's context table), so their figures can "
        "be compared over time.",
        "",
        last_changed_line(site.git, [r.id for r in records]),
        "## Regressions and improvements",
        "",
        thresholds_sentence(site),
        "",
        f"**Status:** {configuration_status(flags)}.",
        "",
        _flags_table(flags, site, page, records),
        "",
        "## Records",
        "",
    ]
    rows = []
    for r in reversed(records):
        row = [
            recorded_at(r).strftime("%Y-%m-%d %H:%M"),
            record_link(r, page, text=r.title or r.id),
            md_text(r.status.state),
        ]
        if site.git.available:
            row.append(commit_markdown(site.git.of(r.id), site.git.repository_url))
        rows.append(row)
    header = ["Measured (UTC)", "Record", "Status"] + (["Added in commit"] if site.git.available else [])
    parts += [md_table(header, rows), ""]
    cells = {(row["record_id"], row["level"]): row for row in site.rows_of(r.id for r in records)}
    files = [("rows as CSV", history_download(key, "csv")), ("rows as JSON", history_download(key, "json"))]
    parts += [
        "## Figures by level",
        "",
        downloads_line(page, "every figure of these records, level by level", files),
    ]
    for m in COMPARED:
        table = _figures_table(records, m, page, cells) if not m.neutral else ""
        if table:
            unit = "" if m.unit in m.label else f" ({md_text(m.unit)})"
            parts += [f"### {md_text(m.heading)}{unit}, by level", "", table, ""]
    return "\n".join(parts)


def history_downloads(site: SiteData, key: str) -> Iterator[tuple[str, str]]:
    """The configuration's frame rows as CSV and JSON: (docs-relative path, content)."""
    ids = [r.id for r in site.configurations[key]]
    yield history_download(key, "csv"), site.csv_of(ids)
    yield history_download(key, "json"), frame_json(site.frame_of(ids))


def history_index(site: SiteData) -> str:
    page = HISTORY_INDEX
    rows = []
    for key, records in sorted(
        site.configurations.items(), key=lambda kv: (kv[1][0].experiment, kv[1][0].variant, kv[0])
    ):
        variant, _, fp = key.rpartition("@")
        experiments = sorted({r.experiment for r in records})
        rows.append(
            [
                f"[{md_text(variant)} @ {fp}]({link(page, history_page(key))})",
                ", ".join(experiment_link(e, page) for e in experiments),
                str(len(records)),
                recorded_at(records[-1]).strftime("%Y-%m-%d"),
                md_text(configuration_status(site.configuration_flags.get(key, []))),
            ]
        )
    intro = (
        "A *configuration* is a variant measured in one context (same fingerprint: model, GPUs, engine version, "
        "server flags, workload...). Each has a history page with its records over time and the regressions or "
        "improvements found in them. " + thresholds_sentence(site)
    )
    table = md_table(["Configuration", "Experiment", "Records", "Latest", "Status"], rows) or "*No records yet.*"
    return "\n".join(["# Configurations and their history", "", intro, "", table, "", all_rows_line(page)])
