"""The one place a record is serialised (``dump_record``) redacts it: no path can write a secret, and no legitimate
value (digests, ids, formulas, paths, figures) is changed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from bench.record import RecordError, create_record_file, dump_record, load_record, parse_record
from bench.record.model import Record
from bench.redact import REDACTED, find_secrets

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "records").rglob("*.json"))
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "records").rglob("*.json"))
# llama.cpp's /props carries a per-process random marker (``<__media_<32 random characters>__>``): it is the one
# value of the shipped records the redactor hides, as it hides any long random string.
RANDOM_FIELD = ("server", "server_info", "props", "media_marker")


def _differences(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [(*path, k) for k in set(a) ^ set(b)]
        for k in set(a) & set(b):
            out += _differences(a[k], b[k], (*path, k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, (*path, str(i)))]
    return [] if a == b else [path]


@pytest.mark.parametrize("path", SHIPPED + FIXTURES, ids=lambda p: p.stem)
def test_every_shipped_record_dumps_unchanged_but_its_random_marker(path: Path) -> None:
    record = load_record(path, check_layout=False).record
    plain = record.model_dump(mode="json", exclude_none=True)
    dumped = json.loads(dump_record(record))
    diffs = _differences(plain, dumped)
    assert diffs in ([], [RANDOM_FIELD]), diffs
    if diffs:
        assert dumped["server"]["server_info"]["props"]["media_marker"] == f"<{REDACTED}>"
    assert parse_record(dumped, path).id == record.id  # still a valid record


def test_shipped_records_are_checked_at_all() -> None:
    assert len(SHIPPED) >= 5 and FIXTURES


def _record(**changes: Any) -> Record:
    data: dict[str, Any] = {
        "id": "20261201T120000Z-plain-abcdef1",
        "experiment": "planted",
        "variant": "plain",
        "created_at": datetime(2026, 12, 1, 12, tzinfo=UTC),
        "provenance": {"kind": "measured"},
        "server": {"engine": "x"},
        "model": {},
        "workload": {"prompt_set": "p"},
        "levels": [],
        "status": {"state": "failed"},
    }
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return Record.model_validate(data)


PLANTED_TREE = {
    "server__url": "http://user:PlantedPw1@host:8000",
    "server__command": ["llama-server", "--api-key", "PlainWordsKey", "--port", "8000"],
    "server__args": {"api-key": "PlainWordsKey", "extra_args": ["--admin-token", "AdminWords"], "port": 8000},
    "server__server_info": {"hf_token": "anything", "note": "token hf_PlantedInfoToken12345"},
    "status__message": "HTTP 500: bad key sk-PlantedMessageKey123456",
    "status__log_excerpt": "-----BEGIN RSA PRIVATE KEY-----\nMIIPlanted\n-----END RSA PRIVATE KEY-----\nok",
    "environment__env_vars": {"NCCL_NET": "/p.so?sig=PlantedSig77", "MY_PASSWORD": "PlantedPw2"},
}


def test_a_record_holding_secrets_is_written_without_them(tmp_path: Path) -> None:
    record = _record(**PLANTED_TREE)
    assert find_secrets(record.model_dump(mode="json"))  # the secrets are in the record object
    path = create_record_file(tmp_path, record)
    text = path.read_text(encoding="utf-8")
    for value in ("PlantedPw1", "PlainWordsKey", "AdminWords", "anything", "hf_Planted", "sk-Planted", "MIIPlanted"):
        assert value not in text, value
    for value in ("PlantedSig77", "PlantedPw2"):
        assert value not in text, value
    again = load_record(path).record
    assert find_secrets(again.model_dump(mode="json")) == []
    assert again.server.url == f"http://{REDACTED}@host:8000"
    assert again.server.command == ["llama-server", "--api-key", REDACTED, "--port", "8000"]
    assert again.server.args == {"api-key": REDACTED, "extra_args": ["--admin-token", REDACTED], "port": 8000}
    assert again.status.log_excerpt == "<redacted private key>\nok"


def test_figures_named_after_tokens_are_kept() -> None:
    client = {"wall_s": 1.0, "cpu_s": 0.5, "cpu_percent": 50.0, "token_events_per_s": 719.8, "token_events": 10}
    record = _record(levels=[{"concurrency": 1, "client": client}])
    dumped = json.loads(dump_record(record))
    assert dumped["levels"][0]["client"] == client


@pytest.mark.parametrize("variant", ["sk-abcdefgh12345678", "hf_abcdefgh12345", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"])
def test_a_secret_looking_variant_is_refused_not_written(variant: str) -> None:
    with pytest.raises(ValidationError, match="does not look like a key or token"):
        _record(variant=variant, id=f"20261201T120000Z-{variant}-abcdef1")
    data = json.loads(dump_record(_record()))
    data["variant"] = variant
    data["id"] = f"20261201T120000Z-{variant}-abcdef1"
    with pytest.raises(RecordError, match=r"x.json: field 'variant': .*does not look like a key or token"):
        parse_record(data, "x.json")
