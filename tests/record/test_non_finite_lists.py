"""The NaN/Infinity check sums a list of numbers in C instead of walking it (a record's samples are thousands of
numbers); what it finds, and the field it names, are those of a walk item by item."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.record.errors import RecordError
from bench.record.load import loads_json, non_finite_field


def _walk(data: Any, prefix: str = "") -> tuple[str, str] | None:
    """The reference: every value visited."""
    if isinstance(data, float) and not math.isfinite(data):
        return prefix, repr(data)
    if isinstance(data, dict):
        for k, v in data.items():
            found = _walk(v, f"{prefix}.{k}" if prefix else str(k))
            if found is not None:
                return found
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found = _walk(v, f"{prefix}[{i}]")
            if found is not None:
                return found
    return None


NUMBERS = st.floats() | st.integers(-(10**30), 10**30) | st.booleans() | st.sampled_from([1e308, -1e308, 10**400])
ITEMS = NUMBERS | st.none() | st.text(max_size=3)


@given(st.lists(NUMBERS, max_size=30) | st.lists(ITEMS, max_size=30))
def test_a_list_finds_what_a_walk_finds(values: list[Any]) -> None:
    assert non_finite_field({"samples": values}) == _walk({"samples": values})


@pytest.mark.parametrize(
    ("values", "found"),
    [
        ([1.0, 2.5, float("nan")], ("s[2]", "nan")),
        ([float("inf"), float("-inf")], ("s[0]", "inf")),  # their sum is NaN: still found, at the first
        ([1e308, 1e308, float("inf")], ("s[2]", "inf")),  # the sum overflows: walked
        ([1e308, 1e308], None),  # finite numbers whose sum overflows
        ([10**400, 1.0], None),  # an integer too large for a float is finite
        ([1, None, float("nan")], ("s[2]", "nan")),  # None: walked
        ([1.0, 2.0, 3], None),
    ],
)
def test_the_field_named(values: list[Any], found: tuple[str, str] | None) -> None:
    assert non_finite_field({"s": values}) == found


def test_a_nan_in_samples_is_refused_with_its_index() -> None:
    text = '{"levels": [{"samples": {"ttft_ms": [1.5, 2.0, NaN, 3.0]}}]}'
    with pytest.raises(RecordError) as info:
        loads_json(text, "r.json")
    assert info.value.field == "levels[0].samples.ttft_ms[2]"
    huge = '{"s": [1.0, 1e999]}'
    with pytest.raises(RecordError) as info:
        loads_json(huge, "r.json")
    assert info.value.field == "s[1]"
