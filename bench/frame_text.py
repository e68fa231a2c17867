"""The frame's rows as the site's CSV and JSON downloads, without pandas: byte for byte what
:func:`bench.dataframe.frame_csv` and :func:`bench.dataframe.frame_json` write of the same rows, and the
comparisons' CSV as ``frame_csv`` of their DataFrame.

pandas builds a typed DataFrame (a column per cell of every row) before it writes a cell: for the downloads of a site
that is most of their cost. Here each column's writer is chosen once (the dtype the frame gives it) and a row's text
depends on that row alone (but for the CSV's time columns, which pandas writes with as many digits of the seconds'
fraction in every cell as the finest cell needs: :func:`csv_fraction`), so a download of many records is the join of
each record's part, written once per record content (the site keeps them in its cache).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from bench.dataframe import _INTS, COLUMNS, _csv_safe
from bench.figures import FIGURES

__all__ = [
    "CSV_HEADER",
    "Row",
    "csv_fraction",
    "csv_lines",
    "json_document",
    "json_document_keyed",
    "json_document_parts",
    "json_lines",
    "rows_csv",
    "rows_json",
    "table_csv",
]

_TIMES = ("created_at", "measured_at")
_FLOATS = frozenset(("duration_s", *(f"{f.key}{s}" for f in FIGURES for s in ("", "_lo", "_hi"))))
_WHOLE = frozenset((*_INTS, *(f"{f.key}_n" for f in FIGURES)))
_FLAGS = frozenset(("test_server", *(f"{f.key}_approx" for f in FIGURES)))


def _time_cell(v: datetime | None, fraction: int) -> str:
    """A time cell with ``fraction`` digits of its seconds' fraction (0, 3 or 6: :func:`csv_fraction`)."""
    if v is None:
        return ""
    u = v.astimezone(UTC)
    text = u.strftime("%Y-%m-%d %H:%M:%S")
    if fraction == 6:
        return f"{text}.{u.microsecond:06d}+00:00"
    if fraction == 3:
        return f"{text}.{u.microsecond // 1000:03d}+00:00"
    return f"{text}+00:00"


def _time_cell_as(fraction: int, v: datetime | None) -> str:
    return _time_cell(v, fraction)


Row = tuple[Any, ...]
"""A row of the frame as the cells of :data:`COLUMNS` in order (what the site keeps: no dict per row)."""
_TIME_AT = tuple(COLUMNS.index(c) for c in _TIMES)
CSV_HEADER = ",".join(COLUMNS) + "\n"
"""The first line of every CSV download (no column name needs quoting)."""


def csv_fraction(rows: Iterable[Row]) -> tuple[int, ...]:
    """Per time column (``created_at``, ``measured_at``): the digits pandas writes of every cell's seconds'
    fraction, the finest any row's time needs: 6 when one has microseconds that are not whole milliseconds, else 3
    when one has milliseconds, else 0 (no fraction). The columns of a file that joins several parts take the
    largest of the parts' (``max``)."""
    found = [0] * len(_TIME_AT)
    for row in rows:
        for i, at in enumerate(_TIME_AT):
            v = row[at]
            if found[i] < 6 and v is not None and v.microsecond:
                found[i] = 6 if v.microsecond % 1000 else 3  # never less than before: it was 0 or 3
    return tuple(found)


def _csv_cell(col: str) -> Callable[[Any], str]:
    """How a cell of the column that is not missing is written: as pandas writes the column's dtype in the frame."""
    if col in _FLOATS:
        return lambda v: repr(float(v))
    if col in _WHOLE:
        return lambda v: str(int(v))
    if col in _FLAGS:
        return lambda v: str(bool(v))
    return lambda v: str(_csv_safe(v))


_CSV_CELLS = tuple(_csv_cell(c) for c in COLUMNS)


def csv_lines(rows: Sequence[Row], fraction: Sequence[int] | None = None) -> str:
    """The rows' lines of the CSV (no header), with the time columns' ``fraction`` (:func:`csv_fraction` of every
    row of the file; default: of these rows). ``CSV_HEADER`` + the lines of consecutive parts, each written with the
    whole file's fraction, is :func:`rows_csv` of all their rows."""
    frac = csv_fraction(rows) if fraction is None else tuple(fraction)
    cells = list(_CSV_CELLS)
    for at, f in zip(_TIME_AT, frac, strict=True):
        cells[at] = partial(_time_cell_as, f)
    texts: dict[str, str] = {}  # the same text cells recur in every row of a record
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        line = []
        for cell, v in zip(cells, row, strict=True):
            if v is None or (type(v) is float and v != v):
                line.append("")
            elif type(v) is str:
                found = texts.get(v)
                if found is None:
                    found = texts[v] = str(_csv_safe(v))
                line.append(found)
            else:
                line.append(cell(v))
        writer.writerow(line)
    return out.getvalue()


def rows_csv(rows: Sequence[dict[str, Any]]) -> str:
    """``frame_csv(frame_from_rows(rows))`` written straight from the rows, without pandas: the same bytes (the
    columns' types as the frame gives them, times in UTC with as many digits of the seconds' fraction in every cell
    of a column as its finest cell needs, text cells safe for a spreadsheet), about forty times faster for one
    record's rows."""
    return CSV_HEADER + csv_lines([tuple(r.get(c) for c in COLUMNS) for r in rows])


# The JSON of pandas' ``to_json`` (its vendored ultrajson, ``double_precision=10``, ``force_ascii=False``): '"',
# '\\', '/' and the control characters escaped, everything else as it is.
_JSON_ESCAPES = str.maketrans(
    {
        **{chr(i): f"\\u{i:04x}" for i in range(0x20)},
        **{"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"},
        **{'"': '\\"', "\\": "\\\\", "/": "\\/"},
    }
)
_JSON_PRECISION = 10
_POW10 = 10.0**_JSON_PRECISION
_THRES_MAX = 1e16 - 1  # as ultrajson computes it, in doubles: 1e16
_THRES_MIN = 1e-15
_INF = float("inf")


def _json_float(v: Any) -> str:
    """A float64 cell as ultrajson writes it (``Buffer_AppendDoubleUnchecked``): ten decimals, rounded its own way
    from doubles, trailing zeros dropped; ``%.10g`` beyond 1e16 and below 1e-15; NaN and infinities null."""
    x = float(v)
    if x != x or x == _INF or x == -_INF:
        return "null"
    neg = x < 0
    a = -x if neg else x
    if a > _THRES_MAX or (a != 0.0 and a < _THRES_MIN):
        return f"{x:.10g}"
    whole = int(a)
    tmp = (a - whole) * _POW10
    frac = int(tmp)
    diff = tmp - frac
    if diff > 0.5 or (diff == 0.5 and (frac == 0 or frac & 1)):
        frac += 1
    if frac >= _POW10:
        frac = 0
        whole += 1
    text = f"{whole}.{frac:010d}".rstrip("0") if frac else f"{whole}.0"
    return "-" + text if neg else text


def _json_time(v: datetime) -> str:
    u = v.astimezone(UTC)
    return (
        f'"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}.'
        f'{u.microsecond // 1000:03d}Z"'
    )


def _json_cell(col: str) -> Callable[[Any], str]:
    if col in _FLOATS:
        return _json_float
    if col in _WHOLE:
        return lambda v: str(int(v))
    if col in _FLAGS:
        return lambda v: "true" if v else "false"
    if col in _TIMES:
        return _json_time
    return lambda v: '"' + str(v).translate(_JSON_ESCAPES) + '"'


_JSON_CELLS = tuple(("  " + json.dumps(c) + ":", _json_cell(c)) for c in COLUMNS)


def json_lines(rows: Iterable[Row]) -> str:
    """The rows as the objects of :func:`frame_json`'s list, joined by ``,\\n`` ("" for no row): a row's text depends
    on that row alone, so :func:`json_document` of consecutive parts is the JSON of all their rows."""
    texts: dict[str, str] = {}  # the same text cells recur in every row of a record (and across records)
    objects = []
    for row in rows:
        cells = []
        for (name, cell), v in zip(_JSON_CELLS, row, strict=True):
            if v is None or (type(v) is float and v != v):
                cells.append(name + "null")
            elif type(v) is str:
                found = texts.get(v)
                if found is None:
                    found = texts[v] = '"' + v.translate(_JSON_ESCAPES) + '"'
                cells.append(name + found)
            else:
                cells.append(name + cell(v))
        objects.append(" {\n" + ",\n".join(cells) + "\n }")
    return ",\n".join(objects)


def json_document(parts: Iterable[str]) -> str:
    """The JSON download of rows written as :func:`json_lines` parts, in order."""
    return "".join(json_document_parts(parts))


def json_document_parts(parts: Iterable[str]) -> Iterator[str]:
    """:func:`json_document` in pieces, for a document too large to hold whole."""
    return (make() for _, make in json_document_keyed((None, not p, partial(str, p)) for p in parts))


Named = tuple[str | None, Callable[[], str]]  # a piece's key (None: none) and how to make its text


def json_document_keyed(parts: Iterable[tuple[str | None, bool, Callable[[], str]]]) -> Iterator[Named]:
    """:func:`json_document_parts` of parts each given as (its key, whether it is empty, how to make it): the
    pieces, each with a key naming its text (the part's key and whether it comes first; None where the part has no
    key), made only when asked, so that a writer that has a piece's bytes already need not make it."""
    yield "json-document-start", partial(str, "[\n")
    first = True
    for key, empty, make in parts:
        if empty:
            continue
        if first:
            yield (None if key is None else f"{key}\0first"), make
            first = False
        else:
            yield (None if key is None else f"{key}\0next"), partial(_after_comma, make)
    yield "json-document-end", partial(str, "\n]\n")


def _after_comma(make: Callable[[], str]) -> str:
    return ",\n" + make()


def rows_json(rows: Sequence[dict[str, Any]]) -> str:
    """``frame_json(frame_from_rows(rows))`` written straight from the rows, without pandas: the same bytes."""
    return json_document([json_lines(tuple(r.get(c) for c in COLUMNS) for r in rows)])


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _column_cell(values: Sequence[Any]) -> Callable[[Any], str]:
    """How pandas writes the cells of a column built from these Python values (the dtype it infers)."""
    found = [v for v in values if not _missing(v)]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in found)
    if found and numbers and len(found) == len(values) and all(isinstance(v, int) for v in found):
        return lambda v: str(int(v))  # int64
    if found and numbers:  # float64: a missing whole number makes the column float
        return lambda v: "" if _missing(v) else repr(float(v))
    return lambda v: "" if _missing(v) else str(_csv_safe(v))  # text, flags (True/False), a mix: object


def table_csv(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> str:
    """``frame_csv(pd.DataFrame(rows, columns=columns))`` without pandas, for cells that are None, bool, int, float
    or str: each column written as the dtype pandas infers from its values (whole numbers with a missing one as
    floats, a flag column with a missing one as object, ...)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(columns)
    cells = [_column_cell([row[i] for row in rows]) for i in range(len(columns))]
    for row in rows:
        writer.writerow([cell(v) for cell, v in zip(cells, row, strict=True)])
    return out.getvalue()
