"""Records as one tidy pandas DataFrame: :func:`frame` (``bench.frame``) and ``bench frame --to csv|parquet|json``.

One row per record × level. Columns, in order:

* the record: ``record_id``, ``experiment``, ``variant``, ``title``, ``provenance`` (measured, transcribed,
  imported), ``test_server``, ``status``, ``engine``, ``engine_version``, ``model``, ``draft_model``,
  ``speculative`` (the algorithm, None without speculation), ``gpu``, ``gpu_count``, ``fingerprint`` and
  ``configuration`` (``variant@fingerprint``, see ``bench.compare``), ``run_group``, ``created_at``,
  ``measured_at``, ``commit`` (the benchbook commit that measured it);
* the level: ``level`` (its key), ``level_name`` (``C=8``, ``saturation``), ``concurrency``, ``level_label``,
  ``level_failure`` (why the level failed; None for a valid level), ``requests_sent``, ``requests_completed``,
  ``requests_failed``, ``duration_s``, ``output_tokens`` (Σ over the level), and the sums the speculative and cache
  figures rest on: ``spec_output_tokens``, ``verify_steps``, ``draft_tokens``, ``accepted_tokens``,
  ``cached_tokens``, ``cache_prompt_tokens``;
* for every figure ``K`` of ``bench.figures.FIGURES``: ``K`` (what the record states), ``K_lo`` and ``K_hi`` (the
  confidence interval, where the record gives one: a level that holds per-request samples, through the bootstrap of
  ``bench.compare``), ``K_n`` (the requests it rests on) and ``K_approx`` (the source gives it as approximate).

Rows come in record order (time, then id), levels in ``bench.level_order`` order. Every text cell passes through
``bench.redact``. The site builds its record, history and comparison tables and their CSV/JSON downloads from these
rows (written by :mod:`bench.frame_text` without pandas, byte for byte :func:`frame_csv` and :func:`frame_json`), so a
page, a download and a notebook cannot disagree.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.atomic_write import write_atomic
from bench.compare import Interval, config_key, fingerprint, level_intervals_many
from bench.figures import FIGURES, Figure
from bench.level_order import level_name, sorted_levels
from bench.record.errors import RecordError
from bench.record.load import load_records
from bench.record.model import Level, Record
from bench.redact import redact_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMNS",
    "FIGURE_COLUMNS",
    "LEVEL_COLUMNS",
    "RECORD_COLUMNS",
    "frame",
    "frame_csv",
    "frame_from_rows",
    "frame_from_tuples",
    "frame_json",
    "frame_rows",
    "frame_rows_each",
    "record_cells",
    "register",
]

RECORD_COLUMNS: tuple[str, ...] = (
    "record_id",
    "experiment",
    "variant",
    "title",
    "provenance",
    "test_server",
    "status",
    "engine",
    "engine_version",
    "model",
    "draft_model",
    "speculative",
    "gpu",
    "gpu_count",
    "fingerprint",
    "configuration",
    "run_group",
    "created_at",
    "measured_at",
    "commit",
)
LEVEL_COLUMNS: tuple[str, ...] = (
    "level",
    "level_name",
    "concurrency",
    "level_label",
    "level_failure",
    "requests_sent",
    "requests_completed",
    "requests_failed",
    "duration_s",
    "output_tokens",
    "spec_output_tokens",
    "verify_steps",
    "draft_tokens",
    "accepted_tokens",
    "cached_tokens",
    "cache_prompt_tokens",
)
SUFFIXES: tuple[str, ...] = ("", "_lo", "_hi", "_n", "_approx")
FIGURE_COLUMNS: tuple[str, ...] = tuple(f"{f.key}{s}" for f in FIGURES for s in SUFFIXES)
COLUMNS: tuple[str, ...] = (*RECORD_COLUMNS, *LEVEL_COLUMNS, *FIGURE_COLUMNS)
"""Every column of the frame, in order."""
_INTS = ("gpu_count", "concurrency", "requests_sent", "requests_completed", "requests_failed", *LEVEL_COLUMNS[-7:])


def record_cells(r: Record) -> dict[str, Any]:
    """The record's columns of the frame (:data:`RECORD_COLUMNS`), not redacted."""
    return {
        "record_id": r.id,
        "experiment": r.experiment,
        "variant": r.variant,
        "title": r.title,
        "provenance": r.provenance.kind,
        "test_server": r.provenance.test_server,
        "status": r.status.state,
        "engine": r.server.engine,
        "engine_version": r.server.version,
        "model": r.model.name,
        "draft_model": r.draft_model.name if r.draft_model is not None else None,
        "speculative": r.speculative.algorithm if r.speculative is not None else None,
        "gpu": r.environment.gpu.model,
        "gpu_count": r.environment.gpu.count,
        "fingerprint": fingerprint(r),
        "configuration": config_key(r),
        "run_group": r.run_group,
        "created_at": r.created_at,
        "measured_at": r.provenance.measured_at,
        "commit": r.benchbook.commit,
    }


def _level_sums(lv: Level) -> dict[str, int | None]:
    s, pc = lv.speculative, lv.prefix_cache
    return {
        "output_tokens": lv.output_tokens.total if lv.output_tokens is not None else None,
        "spec_output_tokens": s.output_tokens if s is not None else None,
        "verify_steps": s.verify_steps if s is not None else None,
        "draft_tokens": s.draft_tokens if s is not None else None,
        "accepted_tokens": s.accepted_tokens if s is not None else None,
        "cached_tokens": pc.cached_tokens if pc is not None else None,
        "cache_prompt_tokens": pc.input_tokens if pc is not None else None,
    }


INTERVAL_BATCH = 32
"""Records whose intervals are bootstrapped in one batch (``bench.compare.level_intervals_many``)."""


def _interval_keys(level: Level) -> list[str]:
    """The figures whose interval the frame gives at this level: those it states from per-request samples."""
    if level.failed:
        return []
    return [spec.key for spec in FIGURES if spec.per_request is not None and spec.value(level) is not None]


_FIGURE_NAMES = {f.key: tuple(f"{f.key}{s}" for s in SUFFIXES) for f in FIGURES}  # a figure's columns, in order


def _figure_cells(spec: Figure, level: Level, intervals: Mapping[str, Interval | None]) -> dict[str, Any]:
    found = spec.value(level)
    m = spec.metric(level) if found else None
    iv = intervals.get(spec.key)
    key, lo, hi, n, approx = _FIGURE_NAMES[spec.key]
    return {
        key: found[0] if found else None,
        lo: iv.lo if iv is not None else None,
        hi: iv.hi if iv is not None else None,
        n: m.n if m is not None else None,
        approx: found[1] if found else None,
    }


def _level_cells(r: Record, lv: Level, base: dict[str, Any]) -> dict[str, Any]:
    row = dict(base)
    row.update(
        level=lv.key,
        level_name=level_name(lv),
        concurrency=lv.concurrency,
        level_label=lv.label,
        level_failure=redact_value("level_failure", lv.failure) if lv.failure else None,
        requests_sent=lv.requests_sent,
        requests_completed=lv.requests_completed,
        requests_failed=lv.requests_failed,
        duration_s=lv.duration_s,
        **_level_sums(lv),
    )
    return row


def frame_rows(records: Iterable[Record], *, intervals: bool = True, confidence: float = 0.95) -> list[dict[str, Any]]:
    """The frame's rows as dicts (record × level; see the module docstring), without pandas. The intervals of
    :data:`INTERVAL_BATCH` records are bootstrapped together (the same intervals, computed at once)."""
    ordered = sorted(records, key=lambda r: (r.created_at, r.id))
    return [row for _, row in _record_rows(ordered, intervals, confidence)]


def frame_rows_each(records: Sequence[Record], *, confidence: float = 0.95) -> list[list[dict[str, Any]]]:
    """Each record's rows, in the order given: what ``frame_rows([record])`` gives for each, their intervals
    bootstrapped :data:`INTERVAL_BATCH` records at a time (each resample matrix read once for all of them: a site
    build reading records cold makes their rows this way)."""
    mine: dict[int, list[dict[str, Any]]] = {id(r): [] for r in records}
    for r, row in _record_rows(records, True, confidence):
        mine[id(r)].append(row)
    return [mine[id(r)] for r in records]


def _record_rows(
    records: Sequence[Record], intervals: bool, confidence: float
) -> Iterator[tuple[Record, dict[str, Any]]]:
    """Each record's rows in turn (its levels in order), with the record they belong to."""
    for start in range(0, len(records), INTERVAL_BATCH):
        levels = [(r, lv) for r in records[start : start + INTERVAL_BATCH] for lv in sorted_levels(r.levels)]
        jobs = [(_interval_keys(lv) if intervals else [], [lv]) for _, lv in levels]
        found = level_intervals_many([j for j in jobs if j[0]], confidence=confidence)[::-1]
        bases: dict[int, dict[str, Any]] = {}  # by the record object: two records may share an id (an error later)
        for (r, lv), (keys, _) in zip(levels, jobs, strict=True):
            if id(r) not in bases:
                bases[id(r)] = {k: redact_value(k, v) if isinstance(v, str) else v for k, v in record_cells(r).items()}
            row = _level_cells(r, lv, bases[id(r)])
            ivs = found.pop() if keys else {}
            for spec in FIGURES:
                row.update(_figure_cells(spec, lv, ivs))
            yield r, row


def _records(source: Path | str | Iterable[Record]) -> list[Record]:
    if not isinstance(source, Path | str):
        return list(source)
    path = Path(source)
    if not path.is_dir():
        raise RecordError(path, "", "a folder of records")
    loaded = load_records(path)
    if loaded.errors:
        raise loaded.errors[0]
    return [lr.record for lr in loaded.records]


def frame(records: Path | str | Iterable[Record], *, intervals: bool = True, confidence: float = 0.95) -> pd.DataFrame:
    """Every record × level as one tidy DataFrame (see the module docstring for the columns).

    ``records``: a records folder (every record file below it; a bad file raises its ``RecordError``, naming the
    file and field) or records already loaded. ``intervals=False`` leaves ``K_lo``/``K_hi`` empty (faster: no
    bootstrap)."""
    return frame_from_rows(frame_rows(_records(records), intervals=intervals, confidence=confidence))


def frame_from_rows(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Rows of :func:`frame_rows` as the typed DataFrame (integers and flags nullable, times in UTC)."""
    import pandas as pd

    return _typed(pd.DataFrame(list(rows), columns=list(COLUMNS)))


def frame_from_tuples(rows: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    """:func:`frame_from_rows` for rows given as tuples of the cells of :data:`COLUMNS` in order (no dict per row)."""
    import pandas as pd

    return _typed(pd.DataFrame.from_records(list(rows), columns=list(COLUMNS), nrows=len(rows)))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    for col in _INTS + tuple(f"{f.key}_n" for f in FIGURES):
        df[col] = df[col].astype("Int64")
    for col in ("test_server", *(f"{f.key}_approx" for f in FIGURES)):
        df[col] = df[col].astype("boolean")
    for col in ("created_at", "measured_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    for col in ("duration_s", *(f"{f.key}{s}" for f in FIGURES for s in ("", "_lo", "_hi"))):
        df[col] = df[col].astype("float64")
    return df


def _csv_safe(v: object) -> object:
    """Text cells starting like a spreadsheet formula get a leading quote; numbers pass unchanged."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


def frame_csv(df: pd.DataFrame) -> str:
    """The frame as CSV text, safe to open in a spreadsheet (no cell is read as a formula)."""
    text: str = df.map(_csv_safe).to_csv(index=False, lineterminator="\n")
    return text


def frame_json(df: pd.DataFrame) -> str:
    """The frame as a JSON list of row objects (ISO dates; NaN and missing values as null)."""
    text: str = df.to_json(orient="records", date_format="iso", indent=1, force_ascii=False)
    return text + "\n"


# ---------------------------------------------------------------- bench frame


def _columns(df: pd.DataFrame, wanted: Sequence[str]) -> pd.DataFrame:
    unknown = [c for c in wanted if c not in df.columns]
    if unknown:
        raise ValueError(f"--columns: unknown column(s) {', '.join(unknown)}")
    return df[list(wanted)] if wanted else df


def _write(df: pd.DataFrame, to: str, out: str | None) -> None:
    if to == "parquet":
        if out is None:
            raise ValueError("--to parquet needs --out FILE (parquet is binary)")
        if importlib.util.find_spec("pyarrow") is None:
            raise ValueError(
                "--to parquet needs pyarrow, which benchbook does not install (a 55 MB wheel for one output "
                "format): pip install pyarrow, or use --to csv or --to json"
            )
        write_atomic(Path(out), df.to_parquet(None, index=False))
        return
    text = frame_csv(df) if to == "csv" else frame_json(df)
    if out is None:
        sys.stdout.write(text)
        return
    write_atomic(Path(out), text)


def _run(args: argparse.Namespace) -> int:
    try:
        df = frame(Path(args.records_dir), intervals=not args.no_intervals)
        df = _columns(df, [c for c in (args.columns or "").split(",") if c])
        _write(df, args.to, args.out)
    except (RecordError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        print(f"wrote {len(df)} row(s) × {len(df.columns)} column(s) to {args.out}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "frame",
        help="every record × level as one table (CSV, JSON or Parquet): the DataFrame of bench.frame()",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    p.add_argument("--records-dir", default="records", help="the records folder (default: records)")
    p.add_argument("--to", choices=("csv", "json", "parquet"), default="csv", help="output format (default: csv)")
    p.add_argument("--out", metavar="FILE", help="write here (default: standard output; parquet needs a file)")
    p.add_argument("--columns", metavar="A,B,...", help="only these columns, in this order")
    p.add_argument(
        "--no-intervals", action="store_true", help="leave the K_lo/K_hi columns empty (no bootstrap: faster)"
    )
    p.set_defaults(handler=_run)
