"""Everything the site is made from, loaded once per build: records, load errors, dead ends, the comparison
settings (``benchbook.yaml``) and git provenance (:mod:`bench.site._git_info`); plus what is derived from them
(fingerprints, configurations and their regression flags, repeats, the rows of :func:`bench.dataframe.frame`), each
computed once per build."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.compare import (
    Comparison,
    Flag,
    RepeatSpread,
    SideMemo,
    fingerprint,
    flags,
    group_spreads,
    history,
    repeat_groups,
    runs_of,
)
from bench.dataframe import COLUMNS, frame_from_tuples, frame_rows
from bench.frame_text import CSV_HEADER, csv_lines, json_document_keyed
from bench.record.errors import RecordError
from bench.record.load import LoadedRecord
from bench.record.model import Record
from bench.settings import Settings

from ._between_builds import Carried
from ._cache import SiteCache
from ._dead_ends import DeadEnd, DeadEndError
from ._git_info import GitInfo
from ._lean import SharedValues, SiteRecord
from ._reliability import Section
from ._site_records import (
    RecordText,
    Rows,
    compact_rows,
    record_text,
    rows_download_key,
    squeeze,
    unsqueeze,
)
from ._text_parts import KeyedPart, TextParts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CONFIG_KEY", "RECORDS_ENV", "SiteData"]

RECORDS_ENV = "BENCHBOOK_RECORDS_DIR"
# Where a generator adapter keeps the SiteData of the current build (hooks/: in the MkDocs config).
CONFIG_KEY = "benchbook_site"
# The variant an experiment's other variants are compared with when benchbook.yaml does not name one.
DEFAULT_BASELINE = "baseline"
COLUMN_INDEX = {c: i for i, c in enumerate(COLUMNS)}  # a column of the frame -> its place in a row's tuple
# Whole records (with their samples) the site keeps at once: an experiment page compares about this many runs.
WHOLE_KEPT = 64
# Configuration (key, thresholds, record digests) -> its flags, as the last build of this process found them (carried
# under ``mkdocs serve``)
_FLAGS_KEPT: Carried[tuple[str, ...], list[Flag]] = Carried()
# Repeated runs (each run's id and digest, in order) -> their spreads, as the last build of this process found them
# (carried under ``mkdocs serve``)
_SPREADS_KEPT: Carried[tuple[str, ...], list[RepeatSpread]] = Carried()


@dataclass(frozen=True)
class SiteData:
    records: Sequence[LoadedRecord] = ()
    errors: Sequence[RecordError | DeadEndError] = ()
    dead_ends: Sequence[DeadEnd] = ()
    settings: Settings = field(default_factory=Settings)
    git: GitInfo = field(default_factory=GitInfo)
    reliability: Sequence[Section] = ()  # the Reliability page's cases, read from the repository's test suite
    docs_dir: Path | None = None  # the hand-written pages (their shortcodes name comparisons to offer downloads of)
    cache: SiteCache | None = field(default=None, compare=False)  # what the last build computed, per record
    # Record id → its rows of the frame, computed when it was loaded (load_site); None: computed when first asked.
    record_rows: Mapping[str, Rows] | None = field(default=None, compare=False, repr=False)
    # Record id → its rows as text in the downloads (load_site: from the site cache); None: made when first asked.
    record_texts: Mapping[str, RecordText] | None = field(default=None, compare=False, repr=False)

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

    def baseline_variant(self, experiment: str) -> str | None:
        """The variant the others are compared with: benchbook.yaml's, else one named ``baseline``, else None."""
        variants = {r.record.variant for r in self.experiments.get(experiment, [])}
        declared = self.settings.experiments.get(experiment)
        if declared is not None and declared.baseline in variants:
            return declared.baseline
        return DEFAULT_BASELINE if DEFAULT_BASELINE in variants else None

    @cached_property
    def fingerprints(self) -> dict[str, str]:
        """Record id → its fingerprint (``bench.compare.fingerprint``), computed once."""
        return {r.record.id: getattr(r, "fingerprint", None) or fingerprint(r.record) for r in self.records}

    def fingerprint_of(self, record: Record) -> str:
        return self.fingerprints.get(record.id) or fingerprint(record)

    def runs(self, record: Record) -> list[Record]:
        """The record and its repeats in its experiment (same run_group, variant, fingerprint), whole: with their
        samples (what comparisons and the bands of charts rest on)."""
        pool = (r.record for r in self.experiments.get(record.experiment, []))
        return [self.whole(r) for r in runs_of(record, pool, fingerprint_of=self.fingerprint_of)]

    @cached_property
    def _wholes(self) -> OrderedDict[str, Record]:
        return OrderedDict()

    def whole(self, record: Record) -> Record:
        """The record with its samples: the site holds its records lean (:mod:`bench.site._lean`) and reads a whole
        one back when asked (the last :data:`WHOLE_KEPT` of them kept)."""
        loaded = self.by_id.get(record.id)
        if not isinstance(loaded, SiteRecord):
            return record
        memo = self._wholes
        if record.id in memo:
            memo.move_to_end(record.id)
            return memo[record.id]
        whole = loaded.whole().record
        memo[record.id] = whole
        if len(memo) > WHOLE_KEPT:
            memo.popitem(last=False)
        return whole

    @cached_property
    def configurations(self) -> dict[str, list[Record]]:
        """``variant@fingerprint`` → its records in time order (``bench.compare.history``)."""
        return history((r.record for r in self.records), fingerprint_of=self.fingerprint_of)

    @cached_property
    def configuration_of(self) -> dict[str, str]:
        """Record id → its configuration key."""
        return {r.id: key for key, recs in self.configurations.items() for r in recs}

    @cached_property
    def repeat_spreads(self) -> list[RepeatSpread]:
        """How far repeated runs land apart (``bench.compare.repeat_spreads``), group by group: under ``mkdocs
        serve`` a group whose records did not change keeps the spreads the last build found (a rebuild after one
        new record computed every group again: the methodology page took 0.28 s of such a rebuild at 1,000 records,
        0.19 s with the groups kept)."""
        _SPREADS_KEPT.turn()
        out: list[RepeatSpread] = []
        for runs in repeat_groups((lr.record for lr in self.records), fingerprint_of=self.fingerprint_of):
            key = tuple(f"{r.id}\0{self.digest(r)}" for r in runs)
            found = _SPREADS_KEPT.get(key)
            if found is None:
                found = group_spreads(runs)
            _SPREADS_KEPT.put(key, found)
            out += found
        return out

    @cached_property
    def configuration_flags(self) -> dict[str, list[Flag]]:
        """Configuration key → its regression/improvement flags, thresholds from the settings
        (``bench.compare.regression_flags``). A configuration whose records and thresholds did not change keeps its
        flags: in the site cache, and under ``mkdocs serve`` in memory."""
        th = self.settings.regression
        settings = th.model_dump_json()
        _FLAGS_KEPT.turn()
        out: dict[str, list[Flag]] = {}
        for key, recs in self.configurations.items():
            found_key = (key, settings, *(self.digest(r) for r in recs))
            found = _FLAGS_KEPT.get(found_key)
            if found is None and self.cache is not None:
                kept = SiteCache.entry_key("flags", *found_key)
                found = self.cache.peek("flags", kept)
                if not isinstance(found, list):
                    found = flags(recs, th)
                    self.cache.put_pickled("flags", kept, found)
            elif found is None:
                found = flags(recs, th)
            out[key] = found
            _FLAGS_KEPT.put(found_key, found)
        return out

    @cached_property
    def _digests(self) -> dict[str, str]:
        return {}

    def digest(self, record: Record) -> str:
        """What a cached result computed from the record is keyed by (``bench.site._cache``, whose folder names the
        code version): a record of the site, the digest of its file as loaded (``SiteRecord.digest``: nothing is read
        again); another, the sha256 of its JSON text as the site shows it. Computed once per record and build."""
        memo = self._digests
        if record.id not in memo:
            loaded = self.by_id.get(record.id)
            if isinstance(loaded, SiteRecord) and loaded.record is record:
                memo[record.id] = loaded.digest
            else:
                text = loaded.raw if loaded is not None and loaded.record is record else record.model_dump_json()
                memo[record.id] = hashlib.sha256(text.encode()).hexdigest()
        return memo[record.id]

    @cached_property
    def comparisons(self) -> dict[tuple[str, str], Comparison]:
        """Memo of (baseline id, candidate id) → comparison, filled by ``bench.site.compare`` during one build."""
        return {}

    @cached_property
    def side_memo(self) -> SideMemo:
        """Each compared side's bootstrapped figures during one build (``compare_records``' ``side_memo``)."""
        return {}

    def previous_in_configuration(self, record: Record) -> Record | None:
        """The record of the same configuration measured just before this one (None for the first)."""
        return self._previous.get(record.id)

    @cached_property
    def _previous(self) -> dict[str, Record]:
        return {r.id: recs[i - 1] for recs in self.configurations.values() for i, r in enumerate(recs) if i > 0}

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every record × level as the rows of :func:`bench.dataframe.frame` (intervals with the site's confidence),
        made when asked (the site keeps them as tuples)."""
        return [dict(zip(COLUMNS, t, strict=True)) for rows in self._rows_by_record.values() for t in rows]

    @cached_property
    def _rows_by_record(self) -> dict[str, Rows]:
        """Record id → its rows as tuples, in frame order (the dict keeps the records' order)."""
        records = sorted((r.record for r in self.records), key=lambda r: (r.created_at, r.id))
        if self.record_rows is not None:
            return {r.id: self.record_rows[r.id] for r in records}
        out: dict[str, list[dict[str, Any]]] = {r.id: [] for r in records}
        for row in frame_rows(records, confidence=self.settings.comparison.confidence):
            out[row["record_id"]].append(row)
        shared = SharedValues()
        return {rid: compact_rows(rows, shared) for rid, rows in out.items() if rows}

    @cached_property
    def _record_order(self) -> dict[str, int]:
        return {rid: i for i, rid in enumerate(self._rows_by_record)}

    def _ordered(self, record_ids: Iterable[str]) -> list[str]:
        order = self._record_order
        return sorted({rid for rid in record_ids if rid in order}, key=order.__getitem__)

    def _tuples_of(self, record_ids: Iterable[str]) -> list[tuple[Any, ...]]:
        by_record = self._rows_by_record
        return [t for rid in self._ordered(record_ids) for t in by_record[rid]]

    def cells_of(self, record_ids: Iterable[str], columns: Sequence[str]) -> list[tuple[Any, ...]]:
        """Of each row of these records (in frame order), its cells in ``columns`` (names of ``COLUMNS``)."""
        at = [COLUMN_INDEX[c] for c in columns]
        return [tuple(t[i] for i in at) for t in self._tuples_of(record_ids)]

    def rows_of(self, record_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The rows of these records, in frame order."""
        return [dict(zip(COLUMNS, t, strict=True)) for t in self._tuples_of(record_ids)]

    @cached_property
    def _texts(self) -> dict[str, RecordText]:
        return dict(self.record_texts or {})

    @cached_property
    def _refracted(self) -> dict[tuple[str, tuple[int, ...]], bytes]:
        return {}

    def _text_of(self, record_id: str) -> RecordText:
        """The record's rows as download text: from loading (the site cache), else written once per build."""
        memo = self._texts
        found = memo.get(record_id)
        if found is None:
            found = memo[record_id] = record_text(self._rows_by_record[record_id])
        return found

    def _csv_part(self, record_id: str, text: RecordText, fraction: tuple[int, ...]) -> str:
        """The record's CSV lines in a file whose time columns have ``fraction``: its own text when they agree, else
        written again (once per build and fraction)."""
        if text.fraction == fraction:
            return text.csv
        memo = self._refracted
        found = memo.get((record_id, fraction))
        if found is None:
            lines = csv_lines(self._rows_by_record[record_id], fraction)
            memo[(record_id, fraction)] = squeeze(lines)  # held as the record's own parts are (RecordText)
            return lines
        return unsqueeze(found)

    def csv_of(self, record_ids: Iterable[str]) -> str:
        """These records' rows as CSV: what ``frame_csv(frame_of(ids))`` writes, joined from each record's part
        (:meth:`_text_of`), without pandas."""
        return "".join(self.csv_parts(record_ids))

    def csv_parts(self, record_ids: Iterable[str]) -> Iterator[str]:
        """:meth:`csv_of` in pieces (the header, then each record's lines), for a file too large to hold whole."""
        return (make() for _, make in self._csv_keyed(self._ordered(record_ids)))

    def _csv_keyed(self, ids: list[str]) -> Iterator[KeyedPart]:
        """:meth:`csv_parts` of records in order, each part keyed (:meth:`_part_key`) and made when asked."""
        texts = [self._text_of(rid) for rid in ids]
        fraction = tuple(map(max, zip(*(t.fraction for t in texts), strict=True)))
        yield "csv-header", partial(str, CSV_HEADER)
        for rid, t in zip(ids, texts, strict=True):
            yield self._part_key(rid, "csv", repr(fraction)), partial(self._csv_part, rid, t, fraction)

    def _json_keyed(self, ids: list[str]) -> Iterator[KeyedPart]:
        """:meth:`json_parts` of records in order, each piece keyed and made when asked."""
        rows = self._rows_by_record
        texts = ((rid, self._text_of(rid)) for rid in ids)
        parts = ((self._part_key(rid, "json"), not rows[rid], _json_text(t)) for rid, t in texts)
        return json_document_keyed(parts)

    def _part_key(self, record_id: str, *made_with: str) -> str | None:
        """What names a record's part of a rows download: its file (its cache digest), the confidence level and
        ``made_with``; None where the record has no digest (no site cache)."""
        digest = getattr(self.by_id[record_id], "digest", None)
        if not isinstance(digest, str):
            return None
        return "\0".join((digest, repr(self.settings.comparison.confidence), *made_with))

    def json_of(self, record_ids: Iterable[str]) -> str:
        """These records' rows as JSON: what ``frame_json(frame_of(ids))`` writes, joined from each record's part,
        without pandas."""
        return "".join(self.json_parts(record_ids))

    def rows_download(self, record_ids: Iterable[str], kind: str) -> TextParts:
        """These records' rows as a CSV (``kind`` ``csv``) or JSON download, made when read; keyed by the records'
        files (their cache digests) and the confidence level, so that a build that made the same file before may
        take it as it is (``bench.site.Outputs.recall``). No key where a record has no digest (no site cache)."""
        ids = self._ordered(record_ids)
        digests = [getattr(self.by_id[rid], "digest", None) for rid in ids]
        conf = repr(self.settings.comparison.confidence)
        key = None
        if all(isinstance(d, str) for d in digests):
            key = rows_download_key(kind, conf, [str(d) for d in digests])
        keyed = partial(self._csv_keyed, ids) if kind == "csv" else partial(self._json_keyed, ids)
        return TextParts(key=key, keyed=keyed)

    def json_parts(self, record_ids: Iterable[str]) -> Iterator[str]:
        """:meth:`json_of` in pieces."""
        return (make() for _, make in self._json_keyed(self._ordered(record_ids)))

    def frame_of(self, record_ids: Iterable[str]) -> pd.DataFrame:
        """The DataFrame of these records' rows (what their CSV and JSON downloads hold)."""
        return frame_from_tuples(self._tuples_of(record_ids))

    def dead_ends_of(self, experiment: str) -> list[DeadEnd]:
        return [d for d in self.dead_ends if d.meta.experiment == experiment]

    @property
    def all_experiments(self) -> list[str]:
        """Experiments with records or dead ends."""
        return sorted(set(self.experiments) | {d.meta.experiment for d in self.dead_ends})


def _json_text(text: RecordText) -> Callable[[], str]:
    """How to make a record's part of a JSON download (its text decompressed when asked)."""
    return lambda: text.json
