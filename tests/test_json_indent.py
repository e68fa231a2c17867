"""bench.json_indent.dumps_indent2 writes exactly what json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.json_indent import dumps_indent2

_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.sampled_from(["", "é", "\u2028", '"', "\\", "\x00", "<redacted>", "日本", "\ud800"])
)
_trees = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8)
        | st.lists(st.integers(), min_size=1, max_size=8)
        | st.lists(st.text(max_size=5), min_size=1, max_size=5)
        | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_trees)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert dumps_indent2(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_values_it_does_not_know_go_to_json_whole() -> None:
    class Sub(float):
        def __repr__(self) -> str:
            return "sub"

    odd: list[Any] = [
        {1: "int key", None: 2, 1.5: [True]},
        [Sub(1.5), 2.0],
        (1, 2, "tuple"),
        OrderedDict(a=1),
        {"nested": [{"k": (3, 4)}, [float("nan"), math.inf, -math.inf]]},
        [True, False, 1, 1.0],
    ]
    for value in odd:
        assert dumps_indent2(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_shipped_record_round_trips_to_its_own_text() -> None:
    root = Path(__file__).resolve().parents[1] / "records"
    files = sorted(root.rglob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert dumps_indent2(data) == json.dumps(data, indent=2, ensure_ascii=False)


_sortable = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(_sortable)
def test_sorted_keys_same_text_as_json_dumps(value: Any) -> None:
    assert dumps_indent2(value, sort_keys=True) == json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def test_sorted_keys_nested_and_odd_keys() -> None:
    nested = {"b": [{"z": 1, "a": {"y": 2, "x": [3, {"d": 4, "c": 5}]}}], "a": (1, {"q": None, "p": True})}
    for value in (nested, {2: "b", 1: "a"}, {"k": OrderedDict(b=1, a=2)}):
        assert dumps_indent2(value, sort_keys=True) == json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    assert dumps_indent2(nested, sort_keys=True).index('"a"') < dumps_indent2(nested, sort_keys=True).index('"b"')
