"""Where each generated page and download lives (paths relative to the docs root), and links between pages.

Links are written to ``.md`` sources, relative to the page that holds them, so the same Markdown works
for MkDocs (which resolves and checks them) and for any other generator reading ``bench render`` output.
"""

from __future__ import annotations

import posixpath

from bench.record.model import Record

from ._escape import md_text

__all__ = [
    "DEAD_ENDS_INDEX",
    "EXPERIMENTS_INDEX",
    "HISTORY_INDEX",
    "RECORDS_INDEX",
    "RECORD_ID_PATTERN",
    "all_rows_download",
    "comparison_download",
    "experiment_download",
    "experiment_link",
    "experiment_page",
    "history_download",
    "history_page",
    "link",
    "record_csv",
    "record_json",
    "record_link",
    "record_page",
]

RECORDS_INDEX = "records/index.md"
# The shape of a record id (as bench.record.model.Record.id requires).
RECORD_ID_PATTERN = r"^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9._-]*-[0-9a-f]{7,12}$"
EXPERIMENTS_INDEX = "experiments/index.md"
DEAD_ENDS_INDEX = "dead-ends/index.md"
HISTORY_INDEX = "history/index.md"


def record_page(record: Record) -> str:
    return f"records/{record.experiment}/{record.id}.md"


def record_json(record: Record) -> str:
    return f"records/{record.experiment}/{record.id}.json"


def record_csv(record: Record) -> str:
    return f"records/{record.experiment}/{record.id}.csv"


def experiment_page(experiment: str) -> str:
    return f"experiments/{experiment}.md"


def history_page(configuration: str, part: int = 1) -> str:
    """The history page of a configuration key ``variant@fingerprint`` (``bench.compare.config_key``); ``part`` 2, 3,
    ...: its further pages of older records (:mod:`bench.site._history_parts`). A fingerprint is hexadecimal, so no
    configuration's first page is named like another's further page."""
    variant, _, fp = configuration.rpartition("@")
    return f"history/{variant}-{fp}.md" if part == 1 else f"history/{variant}-{fp}-{part}.md"


def link(from_page: str, to: str) -> str:
    """Relative link from one docs-relative page to another: ``posixpath.relpath(to, dirname(from_page) or ".")``,
    computed from the two paths' parts where both are plain (no empty, ``.`` or ``..`` part, not absolute), without
    ``relpath``'s two trips through the working directory (a tenth of a ``mkdocs serve`` rebuild's record pages at
    10,000 records, a page naming several links)."""
    start = from_page.split("/")[:-1]
    parts = to.split("/")
    if _ODD_PARTS.isdisjoint(start) and _ODD_PARTS.isdisjoint(parts):
        common = 0
        for a, b in zip(start, parts, strict=False):
            if a != b:
                break
            common += 1
        return "/".join([*[".."] * (len(start) - common), *parts[common:]]) or "."
    return posixpath.relpath(to, posixpath.dirname(from_page) or ".")


_ODD_PARTS = frozenset({"", ".", ".."})  # parts of a path that relpath would resolve first (or an absolute path)


def record_link(record: Record, page: str, *, text: str | None = None) -> str:
    return f"[{md_text(text or record.id)}]({link(page, record_page(record))})"


def experiment_link(experiment: str, page: str) -> str:
    return f"[{md_text(experiment)}]({link(page, experiment_page(experiment))})"


# Downloads: the data behind a table, as CSV and JSON (``ext``), beside the table.


def all_rows_download(ext: str) -> str:
    """Every record × level of the build (the whole ``bench.frame``)."""
    return f"records/all-levels.{ext}"


def comparison_download(baseline_id: str, candidate_id: str, ext: str) -> str:
    """A comparison's rows: the baseline's and the candidate's (latest) record ids name it."""
    return f"comparisons/{baseline_id}--{candidate_id}.{ext}"


def history_download(configuration: str, ext: str) -> str:
    return history_page(configuration).removesuffix(".md") + f".{ext}"


def experiment_download(experiment: str, ext: str) -> str:
    return f"experiments/{experiment}.{ext}"
