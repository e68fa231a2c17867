"""Property-based fuzz of the record loader: random JSON-ish mutations of valid records (values replaced, keys
dropped, renamed or added, odd numbers, deep nesting, cut or damaged text). Whatever the input, the loader returns
a Record or raises RecordError naming the file: never another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.record import RecordError, load_record, parse_record
from bench.record.load import loads_json
from bench.record.model import Record

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [
    ROOT / "records" / "h200-ngram" / "20261130T234109Z-baseline-db2789a.json",  # v2 shape, measured on a GPU
    ROOT / "tests" / "fixtures" / "records" / "eagle-fast-verify" / "20261201T090000Z-baseline-a1b2c3d.json",  # v1
    ROOT / "tests" / "fixtures" / "records" / "fixture-hostile" / "20261201T110000Z-hostile-c3d4e5f.json",
]
SEED_DATA = [json.loads(p.read_text(encoding="utf-8")) for p in SEEDS]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers().map(lambda n: n * 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["", "complete", "sk-abcdefgh12345678", "../../etc", "<script>x</script>", "2026-12-01T00:00Z"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    node = data
    for part in path[:-1]:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    data = json.loads(json.dumps(draw(st.sampled_from(SEED_DATA))))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "delete", "rename", "add", "wrap", "nest"]))
        if not path:
            if op in ("replace", "wrap"):
                data = draw(json_values) if op == "replace" else [data]
            continue
        parent, key = _parent(data, path), path[-1]
        if op == "replace":
            parent[key] = draw(json_values)
        elif op == "delete":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12))] = parent.pop(key)
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12))] = draw(json_values)
        elif op == "wrap":
            parent[key] = {"value": parent[key]} if draw(st.booleans()) else [parent[key]]
        elif op == "nest":
            parent[key] = json.loads("[" * 50 + "1" + "]" * 50)
    return data


def _load(data: Any) -> Record | None:
    try:
        return parse_record(data, "fuzz.json")
    except RecordError as exc:
        assert str(exc).startswith("fuzz.json: field '")
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_records_load_or_raise_record_error(data: Any) -> None:
    _load(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.data())
def test_damaged_text_loads_or_raises_record_error(data: Any, draw: st.DataObject) -> None:
    text = json.dumps(data, allow_nan=True)
    damage = draw.draw(st.sampled_from(["cut", "insert", "digits", "bytes", "none"]))
    if damage == "cut":
        text = text[: draw.draw(st.integers(min_value=0, max_value=len(text)))]
    elif damage == "insert":
        at = draw.draw(st.integers(min_value=0, max_value=len(text)))
        text = text[:at] + draw.draw(st.text(max_size=8)) + text[at:]
    elif damage == "digits":
        text = text.replace('"concurrency": 1', '"concurrency": 1' + "0" * 5000, 1)
    try:
        parsed = loads_json(text, "fuzz.json")
    except RecordError:
        return
    _load(parsed)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=200))
def test_any_bytes_on_disk_load_or_raise_record_error(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "fuzz" / "20261201T000000Z-x-abcdef1.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(raw)
    try:
        load_record(path)
    except RecordError as exc:
        assert str(exc).startswith(f"{path}: field '")
