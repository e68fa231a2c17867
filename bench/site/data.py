"""Everything the site is made from, loaded once per build: records, load errors, dead ends."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bench.record.errors import RecordError
from bench.record.load import LoadedRecord, load_records
from bench.record.model import Record

from .deadends import DeadEnd, DeadEndError, parse_dead_end

__all__ = ["CONFIG_KEY", "RECORDS_ENV", "SiteData", "load_site", "records_dir"]

RECORDS_ENV = "BENCHBOOK_RECORDS_DIR"
# Where a generator adapter keeps the SiteData of the current build (hooks/: in the MkDocs config).
CONFIG_KEY = "benchbook_site"
DEAD_ENDS_DIR = "dead-ends"


def records_dir(default: Path) -> Path:
    """The records folder: ``$BENCHBOOK_RECORDS_DIR`` if set, else ``default`` (the repo's ``records/``)."""
    env = os.environ.get(RECORDS_ENV)
    return Path(env).expanduser().resolve() if env else default


@dataclass(frozen=True)
class SiteData:
    records: Sequence[LoadedRecord] = ()
    errors: Sequence[RecordError | DeadEndError] = ()
    dead_ends: Sequence[DeadEnd] = ()

    @cached_property
    def by_id(self) -> dict[str, LoadedRecord]:
        return {r.record.id: r for r in self.records}

    @cached_property
    def experiments(self) -> dict[str, list[LoadedRecord]]:
        """Experiment name → its records, oldest first."""
        out: dict[str, list[LoadedRecord]] = {}
        for r in self.records:
            out.setdefault(r.record.experiment, []).append(r)
        return dict(sorted(out.items()))

    def latest_per_variant(self, experiment: str) -> list[Record]:
        """The newest record of each variant of an experiment, by variant name."""
        latest: dict[str, Record] = {}
        for r in self.experiments.get(experiment, []):
            latest[r.record.variant] = r.record  # records are sorted oldest first
        return [latest[v] for v in sorted(latest)]

    def dead_ends_of(self, experiment: str) -> list[DeadEnd]:
        return [d for d in self.dead_ends if d.meta.experiment == experiment]

    @property
    def all_experiments(self) -> list[str]:
        """Experiments with records or dead ends."""
        return sorted(set(self.experiments) | {d.meta.experiment for d in self.dead_ends})


def load_dead_ends(docs_dir: Path) -> tuple[list[DeadEnd], list[DeadEndError]]:
    folder = docs_dir / DEAD_ENDS_DIR
    found: list[DeadEnd] = []
    errors: list[DeadEndError] = []
    if not folder.is_dir():
        return found, errors
    for path in sorted(folder.glob("*.md")):
        if path.name == "index.md":
            continue
        rel = f"{DEAD_ENDS_DIR}/{path.name}"
        try:
            found.append(parse_dead_end(path.read_text(encoding="utf-8"), rel, shown_path=str(path)))
        except DeadEndError as exc:
            errors.append(exc)
    found.sort(key=lambda d: (d.meta.date, d.path), reverse=True)
    return found, errors


def load_site(records: Path, docs_dir: Path | None = None) -> SiteData:
    """Load records (bad files become errors, good ones still load) and, with a docs folder, dead ends."""
    result = load_records(records)
    dead_ends, de_errors = load_dead_ends(docs_dir) if docs_dir is not None else ([], [])
    return SiteData(records=tuple(result.records), errors=(*result.errors, *de_errors), dead_ends=tuple(dead_ends))
