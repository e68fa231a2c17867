"""Where each generated page lives (paths relative to the docs root) and relative links between pages.

Links are written to ``.md`` sources, relative to the page that holds them, so the same Markdown works
for MkDocs (which resolves and checks them) and for any other generator reading ``bench render`` output.
"""

from __future__ import annotations

import posixpath

from bench.record.model import Record

__all__ = [
    "DEAD_ENDS_INDEX",
    "EXPERIMENTS_INDEX",
    "HISTORY_INDEX",
    "RECORDS_INDEX",
    "RECORD_ID_PATTERN",
    "experiment_page",
    "history_page",
    "link",
    "record_csv",
    "record_json",
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


def history_page(configuration: str) -> str:
    """The history page of a configuration key ``variant@fingerprint`` (``bench.compare.config_key``)."""
    variant, _, fp = configuration.rpartition("@")
    return f"history/{variant}-{fp}.md"


def link(from_page: str, to: str) -> str:
    """Relative link from one docs-relative page to another."""
    return posixpath.relpath(to, posixpath.dirname(from_page) or ".")
