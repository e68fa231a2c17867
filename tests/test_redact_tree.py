"""``redact_tree`` (the fast walk a site build redacts every record with) gives exactly what ``redact_value("",
...)`` gives: on generated trees with planted fake tokens in keys, values, command lines and nested lists, on
values of other types, and on the shipped records."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.redact import REDACTED, redact_tree, redact_value

# fmt: off
SECRETS = [
    "hf_AbCdEfGhIjKlMnOpQr", "sk-abcdefghijklmnop1234", "ghp_1234567890abcdefABCD", "AKIAABCDEFGHIJKLMNOP",
    "Bearer abc.DEF-123456", "https://user:pw@host/x", "redis://:hunter2@cache:6379", "?access_token=abc123",
    "api_key=hunter2", "--api-key s3cr3t", "aZ3kQ9xW2mN7pL5vR8tYqQ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "Authorization: Basic dXNlcjpwYXNz",
]
KEYS = [
    "api_key", "HF_TOKEN", "token", "max_tokens", "tokenizer", "password", "secretKey", "session_count", "key",
    "keys", "p50", "mean", "command", "args", "url", "pin_password", "token_events_per_s", "", "sig", "AUTH",
    "hf_AbCdEfGhIjKlMnOpQr", "x" * 210 + "_token", "y" * 210, "model", "--hf-token",
]
ARGV_PARTS = ["--api-key", "--token=abc", "--token=", "-t", "--port", "8000", "--hf-token", "-5", "-", "--", "x"]
# fmt: on
leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "plain", "Meta-Llama-3.1-8B", "20261130T231000Z-baseline-db2789a", *SECRETS])
    | st.text(max_size=6)
)
keys = st.sampled_from(KEYS + SECRETS) | st.text(max_size=5)
argv = st.lists(st.sampled_from(ARGV_PARTS + SECRETS) | st.text(max_size=4), min_size=1, max_size=8)
trees = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=5)
        | argv
        | st.lists(st.integers() | st.floats(allow_nan=False) | st.none() | st.booleans(), max_size=6)
        | st.dictionaries(keys, inner, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=800, deadline=None)
@given(trees)
def test_the_same_as_redact_value(value: Any) -> None:
    want = redact_value("", value)
    got = redact_tree(value)
    assert json.dumps(got) == json.dumps(want)  # values, types (1 vs 1.0 vs "1") and key order
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, trees, min_size=1, max_size=4))
def test_planted_secrets_are_hidden_the_same_way(tree: dict[str, Any]) -> None:
    planted = {"server": {"command": ["serve", "--api-key", "sk-abcdefghijklmnop1234"], "env": tree}, "x": [tree]}
    got = redact_tree(planted)
    assert json.dumps(got) == json.dumps(redact_value("", planted))
    assert got["server"]["command"][2] == REDACTED
    assert "sk-abcdefghijklmnop1234" not in json.dumps(got)


class _Str(str):
    pass


def test_values_of_other_types_go_through_redact_value() -> None:
    odd: list[Any] = [
        {"api_key": ()},  # an empty tuple under a secret name is hidden (it is not == [])
        {"args": ("--api-key", "x")},
        {"argv": [_Str("--api-key"), "secret-value"]},  # a str subclass: still read as a command line
        OrderedDict(token="abc", n=1),
        {1: "hf_AbCdEfGhIjKlMnOpQr", None: [1, 2]},
        {"nested": [{"password": 1234}, {"password_count": 3}, {"api_key": True}, {"api_key": None}]},
        [[], {}, "", 0, 0.0, False],
        {"token": [], "api_key": {}, "secret": ""},
    ]
    for value in odd:
        assert json.dumps(redact_tree(value)) == json.dumps(redact_value("", value))


def test_shipped_records_as_parsed() -> None:
    root = Path(__file__).resolve().parents[1] / "records"
    files = sorted(root.rglob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert json.dumps(redact_tree(data)) == json.dumps(redact_value("", data))
