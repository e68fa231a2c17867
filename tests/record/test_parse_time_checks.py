"""``loads_json`` skips the walk over every parsed value (and the per-integer hook) when the text can hold no NaN,
Infinity, overflowing float or over-long integer: what it returns, and every error it raises (file, field, what
was expected), are those of the careful parse that always walks (the reference below, the code before)."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.record import load as L
from bench.record.errors import RecordError
from bench.record.load import loads_json


def _unique_reference(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise L._DuplicateKey(key)
        out[key] = value
    return out


def _reference(raw: str, infinite_ok: frozenset[str] = frozenset()) -> Any:
    """loads_json as it was: every integer through the hook, every value walked."""
    path, where, line = "r.json", "", 1
    try:
        data = json.loads(raw, parse_constant=L._NonFinite, parse_int=L._parse_int, object_pairs_hook=_unique_reference)
    except json.JSONDecodeError as exc:
        raise RecordError(path, f"line {exc.lineno + line - 1} column {exc.colno}", f"valid JSON ({exc.msg})") from None
    except RecursionError:
        raise RecordError(path, where, L.TOO_DEEP) from None
    except L._DuplicateKey as exc:
        raise RecordError(path, f"{where}{exc.key}", "each key once per object (this file gives it twice)") from None
    if L.nests_too_deep(data):
        raise RecordError(path, where, L.TOO_DEEP)
    found_settings: set[str] = set()
    if infinite_ok and isinstance(data, dict):
        found_settings = {
            k for k in infinite_ok & data.keys() if isinstance(data[k], L._NonFinite) and data[k].text == "Infinity"
        }
    found = L.non_finite_field({k: v for k, v in data.items() if k not in found_settings} if found_settings else data)
    if found is not None:
        if found[1].startswith("an integer of "):
            raise RecordError(path, found[0], f"a number of at most {L._MAX_DIGITS:,} digits (got {found[1]})")
        raise RecordError(path, found[0], f"a finite number (got {found[1]}: JSON has no NaN or Infinity)")
    for key in found_settings:
        data[key] = math.inf
    return data


def _outcome(parse: Any, raw: str, **kw: Any) -> tuple[str, Any]:
    try:
        return "ok", parse(raw, **kw)
    except RecordError as exc:
        return "error", (str(exc.path), exc.field, exc.expected)


# Number literals that are not finite once parsed, too long to read, or close to either (finite).
TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-2.5E+309",
    "1e0309",
    "1" * 400 + ".5",
    "9" * 154 + ".0e99",
    "9" * 4001,
    "-" + "7" * 4300,
    "9" * 4000,
    "1e-400",
    "123e99",
    "1.7976931348623157e308",
    "1.8e308",
    "0",
    "-0.0",
    "12",
    "3.25",
]
# Strings that look like numbers (the quick check must not be fooled into skipping, may be fooled into walking).
STRINGS = ['"1e500"', '" 1e500"', '"' + "4" * 200 + '"', '"f0e069014ef3788e068701"', '"NaN"', '"a\\"b"', '"é"']


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    rnd = random.Random(draw(st.integers(0, 2**32)))
    seps = draw(st.sampled_from([(",", ":"), (", ", ": "), (",\n  ", ": "), (" ,\t", " :\n")]))

    def value(depth: int) -> str:
        kind = rnd.random()
        if depth > 3 or kind < 0.55:
            return rnd.choice(TOKENS + STRINGS + ["true", "null", str(rnd.random() * 1000), str(rnd.randint(0, 99))])
        if kind < 0.75:
            return "[" + seps[0].join(value(depth + 1) for _ in range(rnd.randint(0, 5))) + "]"
        keys = [rnd.choice(["a", "b", "mean", "samples", "request_rate", "é"]) for _ in range(rnd.randint(0, 5))]
        return "{" + seps[0].join(f'"{k}"{seps[1]}{value(depth + 1)}' for k in keys) + "}"

    return "{" + seps[0].join(f'"k{i}"{seps[1]}{value(0)}' for i in range(rnd.randint(0, 4))) + "}"


@settings(max_examples=600, deadline=None)
@given(json_texts(), st.sampled_from([frozenset(), frozenset({"k0", "k1"})]))
def test_the_same_values_and_errors_as_the_careful_parse(raw: str, infinite_ok: frozenset[str]) -> None:
    got = _outcome(loads_json, raw, path="r.json", infinite_ok=infinite_ok)
    want = _outcome(_reference, raw, infinite_ok=infinite_ok)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert json.dumps(got[1]) == json.dumps(want[1])  # NaN-free here, exact floats and ints, key order
    else:
        assert got == want


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"a": {"b": [1, 2, NaN]}}', "a.b[2]"),
        ('{"a": [{"x": 1e400}]}', "a[0].x"),
        ('{"a": [{"x": -1.5E+309}]}', "a[0].x"),
        ('{"a": ' + "1" * 400 + ".5}", "a"),
        ('{"a": [' + "9" * 4001 + "]}", "a[0]"),
        ('{"a": {"b": 1, "b": 2}}', "b"),
        ('{"note": "1e500", "v": Infinity}', "v"),
    ],
)
def test_bad_numbers_are_named_by_field(text: str, field: str) -> None:
    with pytest.raises(RecordError) as info:
        loads_json(text, "r.json")
    assert info.value.field == field
    assert _outcome(loads_json, text, path="r.json") == _outcome(_reference, text)


def test_a_plain_record_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[Any] = []
    monkeypatch.setattr(L, "non_finite_field", lambda *a: walked.append(a))
    assert loads_json('{"a": [1.5, 2, "1e5"], "b": {"c": -3.25e12}}', "r.json") == {
        "a": [1.5, 2, "1e5"],
        "b": {"c": -3.25e12},
    }
    assert walked == []
