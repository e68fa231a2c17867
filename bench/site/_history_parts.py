"""A configuration's history as table rows per record, and their split into pages (pure).

A configuration measured nightly for a year has hundreds of records, and each brings a row to the records table, one
to each figure's table and one per regression flag raised at it (thousands, where a configuration's level moves
often): 2.5 MB of HTML on one page at 10,000 synthetic records. So the history is cut into pages, newest first, each
holding whole records (a record's rows are never split over two pages): at most :data:`HISTORY_PER_PAGE` records
and at most :data:`ROWS_BUDGET` bytes of Markdown table rows (what a page's size grows with; its HTML is about
twice its Markdown, and the theme adds its own shell), whichever comes first. A record whose rows alone pass the
budget gets a page of its own.

Every history page lies in ``history/``, so each row's links read the same on every one of them, and the rows are
rendered once per configuration, both to size the pages and to fill them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.compare import Flag, recorded_at
from bench.figures import COMPARED, Figure, figure, format_figure
from bench.level_order import level_name, sorted_levels
from bench.record.model import Level, Record

from ._escape import md_code, md_text
from ._git_info import commit_markdown
from ._page_inputs import configuration_key
from ._paths import history_page, record_link
from ._site_data import SiteData

__all__ = ["HISTORY_PER_PAGE", "KIND_TEXT", "ROWS_BUDGET", "FigureTable", "HistoryRows", "history_rows", "page_of"]

HISTORY_PER_PAGE = 100
ROWS_BUDGET = 300_000

KIND_TEXT = {
    "regression": "regression",
    "improvement": "improvement",
    "unconfirmed": "unconfirmed change",
    "insufficient_data": "insufficient data",
}

Cells = list[str]


@dataclass(frozen=True)
class FigureTable:
    """One figure's table: its columns (the configuration's levels that state it) and each record's row."""

    spec: Figure
    header: Cells
    rows: dict[str, Cells]  # record id -> its row


@dataclass(frozen=True)
class HistoryRows:
    """Every table row of one configuration's history, by record, and the pages they are cut into."""

    key: str
    newest_first: list[Record]
    record_rows: dict[str, Cells]
    record_header: Cells
    figure_tables: list[FigureTable]
    flag_rows: list[tuple[str, Cells]]  # (the record a flag is raised at, its row), in bench.compare's order
    pages: list[list[Record]]  # newest first; page 1 holds the newest records


def _levels(records: Sequence[Record]) -> list[Level]:
    seen: dict[str, Level] = {}
    for r in records:
        for lv in r.levels:
            seen.setdefault(lv.key, lv)
    return sorted_levels(seen.values())


Frame = Mapping[tuple[str, str], Mapping[str, Any]]  # (record id, level key) -> its frame row


def _figure_table(
    records: Sequence[Record], spec: Figure, all_levels: Sequence[Level], page: str, cells: Frame
) -> FigureTable | None:
    """The figure of each record at each level, from the frame rows; a failed level reads failed. None when no
    record of the configuration states the figure."""

    def value(r: Record, key: str) -> float | None:
        row = cells.get((r.id, key))
        return None if row is None or row["level_failure"] is not None else row[spec.key]

    def failed(r: Record, key: str) -> bool:
        row = cells.get((r.id, key))
        return row is not None and row["level_failure"] is not None

    if not any(value(r, lv.key) is not None for r in records for lv in all_levels):
        return None
    levels = [lv for lv in all_levels if any(value(r, lv.key) is not None or failed(r, lv.key) for r in records)]
    rows = {
        r.id: [
            recorded_at(r).strftime("%Y-%m-%d %H:%M"),
            record_link(r, page),
            *("*failed*" if failed(r, lv.key) else format_figure(value(r, lv.key)) for lv in levels),
        ]
        for r in records
    }
    header = ["Measured (UTC)", "Record", *(md_text(level_name(lv)) for lv in levels)]
    return FigureTable(spec, header, rows)


def _flag_row(f: Flag, site: SiteData, page: str, names: Mapping[str, str]) -> Cells:
    lr = site.by_id.get(f.record_id)
    kind = KIND_TEXT[f.kind]
    return [
        f"**{kind}**" if f.kind in ("regression", "improvement") else kind,
        md_text(figure(f.metric).label),
        md_text(names.get(f.level, f.level)),
        record_link(lr.record, page) if lr else md_code(f.record_id),
        "—" if f.ratio is None else f"{f.ratio:.2f}×",
        md_text(f.message),
    ]


def _size(row: Cells) -> int:
    """The bytes of a row as ``bench.md_table`` writes it."""
    return len(("| " + " | ".join(c or " " for c in row) + " |\n").encode())


def _split(newest: Sequence[Record], weight: Mapping[str, int], per_page: int, budget: int) -> list[list[Record]]:
    pages: list[list[Record]] = [[]]
    used = 0
    for r in newest:
        w = weight[r.id]
        if pages[-1] and (len(pages[-1]) >= per_page or used + w > budget):
            pages.append([])
            used = 0
        pages[-1].append(r)
        used += w
    return pages


def history_rows(
    site: SiteData, key: str, *, per_page: int = HISTORY_PER_PAGE, budget: int = ROWS_BUDGET
) -> HistoryRows:
    """The rows of the configuration ``key``'s history and its pages (``per_page`` records, ``budget`` bytes)."""
    page = history_page(key)  # every part lies beside it: the links read the same
    records = site.configurations[key]
    newest = list(reversed(records))
    record_rows = {}
    for r in newest:
        row = [recorded_at(r).strftime("%Y-%m-%d %H:%M"), record_link(r, page, text=r.title or r.id)]
        row.append(md_text(r.status.state))
        if site.git.available:
            row.append(commit_markdown(site.git.of(r.id), site.git.repository_url))
        record_rows[r.id] = row
    record_header = ["Measured (UTC)", "Record", "Status"] + (["Added in commit"] if site.git.available else [])
    cells = {(row["record_id"], row["level"]): row for row in site.rows_of(r.id for r in records)}
    all_levels = _levels(records)
    tables = [
        t for m in COMPARED if not m.neutral and (t := _figure_table(newest, m, all_levels, page, cells)) is not None
    ]
    names = {lv.key: level_name(lv) for lv in all_levels}
    ids = {r.id for r in records}
    # a flag names a record of its configuration; were it another, it goes with the newest record (page 1)
    flag_rows = [
        (f.record_id if f.record_id in ids else newest[0].id, _flag_row(f, site, page, names))
        for f in site.configuration_flags.get(key, [])
    ]
    weight = {r.id: _size(record_rows[r.id]) + sum(_size(t.rows[r.id]) for t in tables) for r in newest}
    for rid, row in flag_rows:
        weight[rid] += _size(row)
    pages = _split(newest, weight, per_page, budget)
    if (per_page, budget) == (HISTORY_PER_PAGE, ROWS_BUDGET) and key not in _memo(site):
        _keep_parts(site, key, {r.id: i for i, part in enumerate(pages, start=1) for r in part})
    return HistoryRows(key, newest, record_rows, record_header, tables, flag_rows, pages)


def _memo(site: SiteData) -> dict[str, dict[str, int]]:
    """Configuration key -> record id -> its page, kept with the site for the build (as its cached properties are)."""
    memo: dict[str, dict[str, int]] = vars(site).setdefault("_history_page_of", {})
    return memo


def _parts_key(site: SiteData, key: str) -> str:
    return hashlib.sha256(f"history-parts\0{configuration_key(site, key)}".encode()).hexdigest()


def _keep_parts(site: SiteData, key: str, parts: dict[str, int]) -> None:
    """Which page holds each record of the configuration ``key``: for this build, and for the next in the site cache
    (whichever makes the rows first: the history pages' generator on a cold build, :func:`page_of` on a warm one)."""
    _memo(site)[key] = parts
    if site.cache is not None:
        site.cache.remember_page(_parts_key(site, key), {"parts": parts})


def page_of(site: SiteData, key: str, record_id: str) -> int:
    """The page (1, 2, ...) of the configuration's history that holds the record's rows; computed once per
    configuration and build (kept with the site, as its other per-build results are) and, with a site cache, kept
    there under the key of the history pages' inputs (a warm build whose history pages come from the cache does not
    make their rows again to link a record page)."""
    memo = _memo(site)
    if key not in memo:
        cache = site.cache
        found = cache.page(_parts_key(site, key)) if cache is not None else None
        parts = found.get("parts") if found is not None else None
        if isinstance(parts, dict) and all(isinstance(v, int) for v in parts.values()):
            memo[key] = {str(rid): part for rid, part in parts.items()}
        else:
            history_rows(site, key)
    return memo[key].get(record_id, 1)
