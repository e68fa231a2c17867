"""History pages: one per configuration (variant + fingerprint), its records over time and its flags.

Configurations, their time order and the regression / improvement flags all come from ``bench.compare``
(``history`` and ``flags``, thresholds from ``benchbook.yaml``); this module lays them out. A figure with too
few earlier records is shown as "insufficient data", never as fine. A failed level (``Level.failure``) is not in
any series: its cell reads "failed". A long history is split into pages (:mod:`bench.site._history_parts`): the
first holds the summary, the status and the newest records, each further page older records with their rows in
every table and the flags raised at them, all linked both ways.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bench.compare import Flag, recorded_at
from bench.md_table import md_table
from bench.record.model import Record

from ._escape import md_code, md_text
from ._git_info import last_changed_line
from ._history_parts import KIND_TEXT, HistoryRows, history_rows, page_of
from ._markup import all_rows_line, downloads_line, scroll_box
from ._paths import HISTORY_INDEX, experiment_link, history_download, history_page, link
from ._site_data import SiteData
from ._text_parts import TextParts

__all__ = [
    "configuration_status",
    "history_downloads",
    "history_index",
    "history_link",
    "history_markdown",
    "history_pages",
    "thresholds_sentence",
]


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
    """The link to the record's configuration history (its first page: summary and status) and, where the history
    has several pages and the record's rows are not on the first, to the page that holds them."""
    key = site.configuration_of.get(record.id)
    if key is None:
        return ""
    # no count of the configuration's records here: a new record would change every record page of its
    # configuration (their bodies are cached by what they show); the history page counts them
    out = f"[history of this configuration]({link(page, history_page(key))})"
    part = page_of(site, key, record.id)
    if part == 1:
        return out
    return out + f" (this record's rows: [page {part}]({link(page, history_page(key, part))}))"


def _pages_line(page: str, key: str, part: int, count: int) -> str:
    """``Pages: 1 · [2](…) · [3](…)``: every page of the history, this one unlinked."""
    items = (str(i) if i == part else f"[{i}]({link(page, history_page(key, i))})" for i in range(1, count + 1))
    return "Pages: " + " · ".join(items) + "."


def _flags_section(site: SiteData, h: HistoryRows, part: int, shown: Sequence[Record]) -> list[str]:
    flags = site.configuration_flags.get(h.key, [])
    ids = {r.id for r in shown}
    rows = [row for rid, row in h.flag_rows if rid in ids]
    if not rows:
        table = "No lasting change beyond the threshold." if not flags else "No flag at the records of this page."
    else:
        header = ["Finding", "Figure", "Level", "At record", "vs window median", "Detail"]
        table = md_table(header, rows)
    if part > 1:
        return [table, ""]
    parts = [thresholds_sentence(site), "", f"**Status:** {configuration_status(flags)}.", "", table, ""]
    if len(h.pages) > 1 and len(rows) < len(flags):
        parts += [f"Flags at older records are listed with those records, on pages 2 to {len(h.pages)}.", ""]
    return parts


def history_pages(site: SiteData, key: str) -> Iterator[tuple[str, str]]:
    """Every page of one configuration's history (``variant@fingerprint``): (docs-relative path, Markdown)."""
    h = history_rows(site, key)
    for part in range(1, len(h.pages) + 1):
        yield history_page(key, part), _history_part(site, h, part)


def history_markdown(site: SiteData, key: str, part: int = 1) -> str:
    """Page ``part`` (1: the first, with the summary and the newest records) of a configuration's history."""
    h = history_rows(site, key)
    if not 1 <= part <= len(h.pages):
        raise ValueError(f"the history of {key} has {len(h.pages)} page(s), not a page {part}")
    return _history_part(site, h, part)


def _history_part(site: SiteData, h: HistoryRows, part: int) -> str:
    key = h.key
    page = history_page(key, part)
    records = h.newest_first
    shown = h.pages[part - 1]
    variant, _, fp = key.rpartition("@")
    count = len(h.pages)
    if part == 1:
        experiments = sorted({r.experiment for r in records})
        first, last = recorded_at(records[-1]), recorded_at(records[0])
        parts = [
            f"# History: {md_text(variant)} @ {fp}",
            "",
            f"Every record of variant {md_code(variant)} with context fingerprint {md_code(fp)} "
            f"(experiment: {', '.join(experiment_link(e, page) for e in experiments)}), in time order: "
            f"{len(records)} record(s), {first:%Y-%m-%d} to {last:%Y-%m-%d}. Records with the same fingerprint "
            "and variant were measured in the same context (see the methodology's context table), so their "
            "figures can be compared over time.",
            "",
        ]
        if count > 1:
            parts += [
                f"This page lists the newest {len(shown)} records; the older ones are on further pages, newest "
                f"first. {_pages_line(page, key, part, count)}",
                "",
            ]
        parts.append(last_changed_line(site.git, [r.id for r in records]))
    else:
        start = sum(len(p) for p in h.pages[: part - 1]) + 1
        parts = [
            f"# History: {md_text(variant)} @ {fp}, page {part} of {count}",
            "",
            f"Records {start:,}–{start + len(shown) - 1:,} of {len(records):,} of variant {md_code(variant)} with "
            f"context fingerprint {md_code(fp)}, newest first. The [first page]({link(page, history_page(key))}) "
            f"has the configuration's summary, its status and the newest records. "
            + _pages_line(page, key, part, count),
            "",
        ]
    parts += ["## Regressions and improvements", "", *_flags_section(site, h, part, shown)]
    parts += ["## Records", "", md_table(h.record_header, [h.record_rows[r.id] for r in shown]), ""]
    files = [("rows as CSV", history_download(key, "csv")), ("rows as JSON", history_download(key, "json"))]
    parts += [
        "## Figures by level",
        "",
        downloads_line(page, "every figure of these records, level by level", files),
    ]
    for t in h.figure_tables:
        m = t.spec
        unit = "" if m.unit in m.label else f" ({md_text(m.unit)})"
        table = md_table(t.header, [t.rows[r.id] for r in shown], align="ll" + "r" * (len(t.header) - 2))
        parts += [f"### {md_text(m.heading)}{unit}, by level", "", scroll_box(table), ""]
    if count > 1:
        parts += [_pages_line(page, key, part, count), ""]
    return "\n".join(parts)


def history_downloads(site: SiteData, key: str) -> Iterator[tuple[str, TextParts]]:
    """The configuration's frame rows as CSV and JSON: (docs-relative path, content)."""
    ids = [r.id for r in site.configurations[key]]
    yield history_download(key, "csv"), site.rows_download(ids, "csv")
    yield history_download(key, "json"), site.rows_download(ids, "json")


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
