"""The environment diff's remembered flattening gives what flattening afresh gives (bench.compare._envdiff)."""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from cmp_fixtures import level, record
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.compare import _envdiff
from bench.compare._context import role_of
from bench.compare._envdiff import FieldDiff, environment_diff, flatten_record
from bench.record.model import Record


def _reference_flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """The plain recursion over any Mapping (what ``_flatten`` does without its dict fast path)."""
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            _reference_flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, Mapping):
        return
    else:
        out[prefix] = value


def _reference_diff(a: Record, b: Record) -> list[FieldDiff]:
    fa, fb = flatten_record(a), flatten_record(b)  # a new flattening each call
    rows = [
        FieldDiff(k, fa.get(k), fb.get(k), role_of(k), a.is_claimed(k) and k in fa, b.is_claimed(k) and k in fb)
        for k in sorted(fa.keys() | fb.keys())
        if fa.get(k) != fb.get(k)
    ]
    return sorted(rows, key=lambda r: (r.role != "context", r.field))


_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.lists(st.integers(), max_size=3)
_tree = st.recursive(
    _leaf,
    lambda inner: (
        st.dictionaries(st.text(max_size=3), inner, max_size=4)
        | st.dictionaries(st.integers(0, 9), inner, max_size=3).map(lambda d: OrderedDict(d))
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(MappingProxyType)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_tree)
def test_flatten_fast_path_matches_the_plain_recursion(value: Any) -> None:
    fast: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    _envdiff._flatten(value, "", fast)
    _reference_flatten(value, "", plain)
    assert list(fast.items()) == list(plain.items())  # same names, values and order


_args = st.dictionaries(st.sampled_from(["tp", "dp", "mem-fraction", "cuda-graph-max-bs"]), st.integers(1, 8))
_env = st.dictionaries(st.sampled_from(["NCCL_ALGO", "NCCL_PROTO", "NCCL_DEBUG"]), st.sampled_from(["Ring", "LL"]))
_overrides = st.fixed_dictionaries(
    {"server.args": _args, "environment.env_vars": _env},
    optional={
        "environment.info": st.dictionaries(st.sampled_from(["hostname", "rack"]), st.text(max_size=3), max_size=2),
        "environment.gpu.count": st.integers(1, 8),
        "claims": st.lists(st.sampled_from(["server.args", "server.args.tp", "environment.env_vars"]), unique=True),
        "tags": st.lists(st.sampled_from(["a", "b"]), max_size=2),
    },
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_overrides, min_size=2, max_size=4), st.booleans())
def test_remembered_diff_equals_a_fresh_one(overrides: list[dict[str, Any]], speculative: bool) -> None:
    recs = [
        record("baseline", [level(1, 100.0)], speculative=speculative and i % 2 == 1, overrides=o, suffix=f"{i:07d}")
        for i, o in enumerate(overrides)
    ]
    for _ in range(2):  # the second round reads every flattening from the memo
        for a in recs:
            for b in recs:
                assert environment_diff(a, b) == _reference_diff(a, b)
    assert all(_envdiff._flat(r) == flatten_record(r) for r in recs)


def test_memo_is_per_object_and_dropped_with_it() -> None:
    a = record("baseline", [level(1, 100.0)], overrides={"server.args": {"tp": 2}})
    b = record("baseline", [level(1, 100.0)], overrides={"server.args": {"tp": 4}})
    assert [(d.field, d.a, d.b) for d in environment_diff(a, b)] == [("server.args.tp", 2, 4)]
    key = id(a)
    assert key in _envdiff._FLAT
    del a
    gc.collect()
    assert key not in _envdiff._FLAT or _envdiff._FLAT[key][0]() is not None  # gone, or the id holds a new object
    c = record("baseline", [level(1, 100.0)], overrides={"server.args": {"tp": 8}})  # may reuse a's id
    assert [(d.field, d.a, d.b) for d in environment_diff(c, b)] == [("server.args.tp", 8, 4)]


def test_memo_keeps_at_most_flat_kept_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_envdiff, "FLAT_KEPT", 2)
    recs = [record("baseline", [level(1, 100.0)], overrides={"server.args": {"tp": t}}) for t in range(1, 6)]
    for a in recs:
        for b in reversed(recs):
            assert environment_diff(a, b) == _reference_diff(a, b)
            assert len(_envdiff._FLAT) <= 2
