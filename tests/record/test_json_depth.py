"""How deep a JSON file may nest is one number, ``MAX_JSON_DEPTH``, on every Python: 3.11's parser gives up near
1,000 levels and 3.13's reads 5,000, so without the rule the same file was "too deep" on one and something else on
the other (a list where an object belongs, or a crash in a recursive walk)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gate._secrets import secret_fields
from bench.record.errors import RecordError
from bench.record.load import MAX_JSON_DEPTH, load_record, loads_json, nests_too_deep

HOSTILE = Path(__file__).parent / "hostile" / "hostile"
BASE = HOSTILE / "20261205T000000Z-case00-0000000.json"
TOO_DEEP = f"JSON nested at most {MAX_JSON_DEPTH} deep (this file nests deeper)"


def _depth(value: Any) -> int:
    """The reference: containers on the longest path from the top (a scalar is 0 deep)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _chain(depth: int, leaf: Any = 1) -> Any:
    """Objects and lists in turn, ``depth`` containers deep, each beside numbers (and, above the innermost, a
    shallower list)."""
    value = leaf
    for i in range(depth):
        value = [0.5, 1, value, 2] if i % 2 else {"a": 1.5, "c": [3, 4] if i else 3, "b": value}
    return value


def _chain_text(depth: int, leaf: str = "1") -> str:
    """``json.dumps(_chain(depth))`` built without recursion (json.dumps stops near 1,000 levels)."""
    opens, closes = [], []
    for i in range(depth):
        opens.append("[0.5, 1, " if i % 2 else '{"a": 1.5, "c": ' + ("[3, 4]" if i else "3") + ', "b": ')
        closes.append(", 2]" if i % 2 else "}")
    return "".join(reversed(opens)) + leaf + "".join(closes)


def _refused(raw: str) -> str:
    with pytest.raises(RecordError) as info:
        loads_json(raw, "r.json")
    return info.value.expected


def test_the_limit_is_far_above_any_record_and_below_every_parsers_own() -> None:
    records = sorted((Path(__file__).parents[2] / "records").rglob("*.json"))
    assert records
    assert max(_depth(json.loads(p.read_text("utf-8"))) for p in records) <= 10 < MAX_JSON_DEPTH
    assert MAX_JSON_DEPTH < 900  # 3.11.7's json.loads reads 900 levels and refuses 1,200


@pytest.mark.parametrize("depth", [1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])
def test_json_up_to_the_limit_is_read(depth: int) -> None:
    value = _chain(depth)
    assert _depth(value) == depth and json.loads(_chain_text(depth)) == value
    assert loads_json(_chain_text(depth), "r.json") == value


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 2, 1_000, 5_000])
def test_json_past_the_limit_is_refused_alike_on_every_python(depth: int) -> None:
    assert _refused(_chain_text(depth)) == TOO_DEEP


@pytest.mark.parametrize("depth", [5_000, 50_000])
def test_nesting_past_any_parser_gives_the_same_error(depth: int) -> None:
    assert _refused("[" * depth + "]" * depth) == TOO_DEEP
    assert _refused('{"a":' * depth + "1" + "}" * depth) == TOO_DEEP


def test_the_deep_branch_is_found_behind_wide_flat_ones() -> None:
    """A container that holds no container is skipped whole: the deep one is found after thousands of numbers, and
    in the last value of an object."""
    deep = _chain(MAX_JSON_DEPTH)
    assert nests_too_deep([*range(5_000), deep]) and not nests_too_deep([*range(5_000), _chain(MAX_JSON_DEPTH - 1)])
    assert nests_too_deep({**{f"k{i}": float(i) for i in range(1_000)}, "z": deep})
    assert not nests_too_deep({**{f"k{i}": [i] for i in range(1_000)}, "z": _chain(MAX_JSON_DEPTH - 1)})


_TREES = st.recursive(
    st.integers(0, 9) | st.text(max_size=2),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=2), kids, max_size=3),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(_TREES, st.integers(MAX_JSON_DEPTH - 8, MAX_JSON_DEPTH + 2))
def test_too_deep_is_exactly_a_path_longer_than_the_limit(tree: Any, pad: int) -> None:
    """Random trees, wrapped so their depth lands either side of the limit, against the recursive reference."""
    value = _chain(pad, tree)
    assert nests_too_deep(value) == (_depth(value) > MAX_JSON_DEPTH)


def _record_nesting(tmp_path: Path, depth: int) -> Path:
    """The corpus's valid base record with ``server.server_info`` (free-form) nested so the file is ``depth`` deep."""
    data = json.loads(BASE.read_text("utf-8"))
    nested: list[Any] = []
    for _ in range(depth - 4):  # the record, server, server_info and the innermost list
        nested = [nested]
    data["server"]["server_info"]["nested"] = nested
    assert _depth(data) == depth
    folder = tmp_path / "hostile"
    folder.mkdir(parents=True)
    path = folder / BASE.name
    path.write_text(json.dumps(data, indent=1), "utf-8")
    return path


def test_a_record_nesting_to_the_limit_loads_and_one_level_more_does_not(tmp_path: Path) -> None:
    assert load_record(_record_nesting(tmp_path / "a", MAX_JSON_DEPTH)).record.id == BASE.stem
    with pytest.raises(RecordError) as info:
        load_record(_record_nesting(tmp_path / "b", MAX_JSON_DEPTH + 1))
    assert (info.value.field, info.value.expected) == ("(whole file)", TOO_DEEP)


def test_the_gates_secret_scan_leaves_a_too_deep_file_to_the_loader() -> None:
    """The scan walks the parsed tree recursively: past the limit it reports nothing (the loader refuses the file)
    instead of failing in the walk; within it, a planted token is found."""
    token = "sk-" + "abcdefghijklmnop" * 3
    assert secret_fields(_chain_text(2_000, json.dumps(token)).encode()) == []
    assert secret_fields(json.dumps(_chain(20, token)).encode()) == ["[2].b" * 10]
