"""``bench.md_table``: the pipe table every renderer lays out, and the cells of measured numbers and ratios that the
Performance page and the benchmark scripts' printed tables share."""

from __future__ import annotations

import pytest

from bench.md_table import md_table, number_cell, ratio_cell


def test_a_table_has_a_header_an_alignment_row_and_one_line_per_row() -> None:
    out = md_table(["a", "b"], [["1", ""], ["x", "y"]], align=["l", "r"])
    assert out.splitlines() == ["| a | b |", "| --- | ---: |", "| 1 |   |", "| x | y |"]
    assert md_table(["a"], []) == ""
    with pytest.raises(ValueError, match="row has 1 cells, header has 2"):
        md_table(["a", "b"], [["1"]])


@pytest.mark.parametrize(
    ("value", "fmt", "cell"),
    [
        (12345.678, ",.1f", "12,345.7"),
        (3, "d", "3"),
        (0, ",.1f", "0.0"),
        (None, ",.1f", "—"),
        (True, "d", "—"),
        ("7", ",.1f", "—"),
    ],
)
def test_a_number_cell_is_the_number_or_a_dash_where_none_was_measured(value: object, fmt: str, cell: str) -> None:
    assert number_cell(value, fmt) == cell


@pytest.mark.parametrize(
    ("value", "fmt", "cell"),
    [(7.43, ".1f", "7.4×"), (1.333, ".2f", "1.33×"), (0.0, ".1f", "0.0×"), (None, ".1f", "—"), (False, ".1f", "—")],
)
def test_a_ratio_cell_carries_the_times_sign_and_a_measured_zero_is_shown(value: object, fmt: str, cell: str) -> None:
    assert ratio_cell(value, fmt) == cell
