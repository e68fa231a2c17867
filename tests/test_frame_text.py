"""``bench.frame_text``: the site's CSV and JSON downloads written straight from the frame's rows, byte
for byte what pandas writes (``frame_csv``/``frame_json`` of ``frame_from_rows(rows)``, which ``bench frame`` and the
DataFrame API keep), on the shipped records, the fixtures, synthetic records of the site benchmark, and rows with
every awkward cell hypothesis finds; and both written from per-record parts, as the site joins them."""

from __future__ import annotations

import csv
import io
import sys
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.dataframe import COLUMNS, frame_csv, frame_from_rows, frame_json, frame_rows
from bench.frame_text import (
    CSV_HEADER,
    csv_fraction,
    csv_lines,
    json_document,
    json_document_keyed,
    json_lines,
    rows_csv,
    rows_json,
    table_csv,
)
from bench.record.load import load_record
from bench.record.model import Record

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "records", ROOT / "tests" / "fixtures" / "records")


def _pandas(rows: list[dict[str, Any]]) -> str:
    return frame_csv(frame_from_rows(rows))


def _pandas_json(rows: list[dict[str, Any]]) -> str:
    return frame_json(frame_from_rows(rows))


def _by_record(rows: list[dict[str, Any]]) -> list[list[tuple[Any, ...]]]:
    parts: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows:
        parts.setdefault(r["record_id"], []).append(tuple(r.get(c) for c in COLUMNS))
    return list(parts.values())


def _joined(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """The CSV and JSON of the rows joined from per-record parts, as ``SiteData.csv_of``/``json_of`` do."""
    parts = _by_record(rows)
    whole = csv_fraction(t for p in parts for t in p)
    csv_text = CSV_HEADER + "".join(csv_lines(p, whole) for p in parts)
    return csv_text, json_document(json_lines(p) for p in parts)


def _shipped() -> list[Record]:
    return [load_record(p).record for folder in FOLDERS for p in sorted(folder.rglob("*.json"))]


def _synthetic(n: int) -> list[Record]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic_records import _template_texts, synthetic_record
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    templates = _template_texts()
    return [Record.model_validate(synthetic_record(i, n, templates)) for i in range(0, n, 7)]


@pytest.fixture(scope="module")
def shipped_rows() -> list[dict[str, Any]]:
    return frame_rows(_shipped())


def test_each_shipped_record_and_all_together_as_pandas_writes_them(shipped_rows: list[dict[str, Any]]) -> None:
    ids = list(dict.fromkeys(r["record_id"] for r in shipped_rows))
    assert len(ids) > 20
    for rid in ids:
        mine = [r for r in shipped_rows if r["record_id"] == rid]
        assert rows_csv(mine) == _pandas(mine), rid
        assert rows_json(mine) == _pandas_json(mine), rid
    assert rows_csv(shipped_rows) == _pandas(shipped_rows)
    assert rows_json(shipped_rows) == _pandas_json(shipped_rows)
    assert _joined(shipped_rows) == (_pandas(shipped_rows), _pandas_json(shipped_rows))


def test_synthetic_records_as_pandas_writes_them() -> None:
    rows = frame_rows(_synthetic(60), intervals=False)
    assert rows_csv(rows) == _pandas(rows)
    assert rows_json(rows) == _pandas_json(rows)
    first = [r for r in rows if r["record_id"] == rows[0]["record_id"]]
    assert rows_csv(first) == _pandas(first)
    assert rows_json(first) == _pandas_json(first)


@pytest.mark.parametrize(
    ("micros", "cell"),
    [
        ((0, 0), "2026-11-30 23:41:09+00:00"),  # no fraction: none written
        ((1000, 0), "2026-11-30 23:41:09.001+00:00"),  # whole milliseconds: pandas writes three digits
        ((120000, 250000), "2026-11-30 23:41:09.120+00:00"),
        ((1000, 1), "2026-11-30 23:41:09.001000+00:00"),  # one time with microseconds: six in every cell
    ],
)
def test_time_columns_get_as_many_digits_as_their_finest_cell(
    shipped_rows: list[dict[str, Any]], micros: tuple[int, int], cell: str
) -> None:
    rows = [dict(shipped_rows[0]), dict(shipped_rows[0])]
    for i, (row, us) in enumerate(zip(rows, micros, strict=True)):
        row["created_at"] = datetime(2026, 11, 30, 23, 41, 9 + i, us, tzinfo=UTC)
        row["record_id"] = f"r{i}"  # two records: the download joins their parts
    text = rows_csv(rows)
    first = list(csv.reader(io.StringIO(text)))[1]
    assert first[COLUMNS.index("created_at")] == cell
    assert text == _pandas(rows)
    assert _joined(rows)[0] == _pandas(rows)


def test_no_rows_is_the_header_alone() -> None:
    assert rows_csv([]) == _pandas([])
    assert rows_csv([]).count("\n") == 1
    assert rows_json([]) == _pandas_json([]) == "[\n\n]\n"


TEXT = (
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
    | st.sampled_from(
        ["=1+1", "+x", "-3", "@sum", "\tx", "\rx", 'a"b', "a,b", "line\nbreak", "", " ", "NaN", "None", "a/b\\c"]
    )
    | st.sampled_from(["\x00", "\x7f", "\u2028", "<&>", "\x1f\x0b", "é😀"])
)
FLOAT = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**6), 10**6)
    | st.sampled_from([0.1, 1e16, 1e-5, 123456789.123456789, 1 / 3, -0.0, 5.0])
    # JSON: NaN and infinities (null), the ten decimals' rounding (halfway cases, carry into the whole part), the
    # exponent form's thresholds
    | st.sampled_from([float("nan"), float("inf"), -float("inf"), 2.5e-10, 1.5e-10, 0.99999999995, 9.99999999995])
    | st.sampled_from([9999999999999998.0, 1e16 + 2, 1e-15, -1e-15, 9.9e-16, -2.5e-11, 0.5, 1e300, 5e-324])
)
TIME = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2090, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]),
)


@st.composite
def _rows(draw: st.DrawFn, template: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows like ``template`` with up to 25 cells replaced by values of the column's type in the frame."""
    kinds = {col: str(dtype) for col, dtype in frame_from_rows([template]).dtypes.items()}
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        row = dict(template)
        for col in draw(st.lists(st.sampled_from(sorted(row)), max_size=25, unique=True)):
            kind = kinds[col]
            if kind.startswith("datetime"):
                row[col] = draw(TIME | st.none()) if col == "measured_at" else draw(TIME)
            elif kind == "boolean":
                row[col] = draw(st.booleans() | st.none())
            elif kind == "Int64":
                row[col] = draw(st.integers(0, 10**12) | st.none())
            elif kind == "float64":
                row[col] = draw(FLOAT | st.none())
            else:
                row[col] = draw(TEXT | st.none())
        rows.append(row)
    return rows


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_awkward_cells_as_pandas_writes_them(data: st.DataObject, shipped_rows: list[dict[str, Any]]) -> None:
    template = data.draw(st.sampled_from(shipped_rows))
    rows = data.draw(_rows(template))
    assert rows_csv(rows) == _pandas(rows)
    assert rows_json(rows) == _pandas_json(rows)
    # as the site writes a download of several records: from each record's part (rows of one id)
    for i, row in enumerate(rows):
        row["record_id"] = f"r{i // 2}"
    assert _joined(rows) == (_pandas(rows), _pandas_json(rows))


def test_rows_as_tuples_make_the_same_frame(shipped_rows: list[dict[str, Any]]) -> None:
    from bench.dataframe import COLUMNS, frame_from_tuples, frame_json

    tuples = [tuple(row.get(c) for c in COLUMNS) for row in shipped_rows]
    assert frame_json(frame_from_tuples(tuples)) == frame_json(frame_from_rows(shipped_rows))
    assert frame_csv(frame_from_tuples(tuples)) == frame_csv(frame_from_rows(shipped_rows))
    assert frame_json(frame_from_tuples([])) == frame_json(frame_from_rows([]))


CELL = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | FLOAT | TEXT


@st.composite
def _table(draw: st.DrawFn) -> tuple[list[tuple[Any, ...]], list[str]]:
    """A few columns, each drawn from one kind of cell (with missing ones) or from a mix of kinds."""
    width = draw(st.integers(1, 5))
    kinds = [
        draw(st.sampled_from([st.booleans(), st.integers(-(10**6), 10**6), FLOAT, TEXT, CELL])) for _ in range(width)
    ]
    height = draw(st.integers(0, 4))
    rows = [tuple(draw(k | st.none()) if draw(st.booleans()) else draw(k) for k in kinds) for _ in range(height)]
    return rows, [f"c{i}" for i in range(width)]


@settings(max_examples=300, deadline=None)
@given(table=_table())
def test_any_table_as_pandas_writes_it(table: tuple[list[tuple[Any, ...]], list[str]]) -> None:
    import pandas as pd

    rows, columns = table
    assert table_csv(rows, columns) == frame_csv(pd.DataFrame(rows, columns=columns))


@given(st.lists(st.tuples(st.sampled_from(["", ' {\n "a": 1\n }', ' {\n "b": 2\n }']), st.booleans())))
def test_a_keyed_json_document_is_the_document_and_names_each_piece_by_its_text(parts: list[tuple[str, bool]]) -> None:
    keyed = list(
        json_document_keyed((f"k{i}" if has else None, not p, partial(str, p)) for i, (p, has) in enumerate(parts))
    )
    texts = [make() for _, make in keyed]
    assert "".join(texts) == json_document(p for p, _ in parts)
    names = [k for k, _ in keyed if k is not None]
    assert len(names) == len(set(names))  # no two pieces share a key
    by_name: dict[str, set[str]] = {}
    for (key, _), text in zip(keyed, texts, strict=True):
        if key is not None:
            by_name.setdefault(key.split("\0")[-1] if "\0" in key else key, set()).add(text[:2])
    assert by_name.get("next", {",\n"}) == {",\n"}  # a piece after the first starts with the comma; the first not
    assert ",\n" not in by_name.get("first", set())
