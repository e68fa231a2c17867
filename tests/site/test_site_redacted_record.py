"""The site's redaction of a record (``redacted_record``: the record a page shows and the JSON text it offers for
download) is byte for byte what the plain path gives: ``redact_value`` over the record and over its file's JSON,
written by ``json.dumps(indent=2, ensure_ascii=False)``; on shipped, fixture and synthetic records, and on records
with fake tokens planted in keys, values, command lines and nested lists."""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from site_helpers import FIXTURES, ROOT, SHIPPED

from bench.record.errors import RecordError
from bench.record.load import LoadedRecord, load_record
from bench.record.model import Record
from bench.redact import REDACTED, redact_value
from bench.site._site_load import redacted_record


def _plain(loaded: LoadedRecord) -> LoadedRecord:
    """The reference: redacted_record as written before it was made faster."""
    data = loaded.record.model_dump(mode="json", exclude_none=True)
    clean = redact_value("", data)
    if clean == data:
        return loaded
    try:
        record = Record.model_validate(clean)
    except ValidationError as exc:
        field_name = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "(whole file)"
        raise RecordError(
            loaded.path, field_name, "a value that is not a key or token (the record is not shown)"
        ) from None
    raw = json.dumps(redact_value("", json.loads(loaded.raw)), indent=2, ensure_ascii=False) + "\n"
    return replace(loaded, record=record, raw=raw)


def _outcome(shown: Any, loaded: LoadedRecord) -> tuple[str, ...]:
    try:
        out = shown(loaded)
    except RecordError as exc:
        return ("error", str(exc.path), exc.field, exc.expected)
    return ("ok", out.record.model_dump_json(), out.raw)


def _synthetic(tmp: Path, n: int) -> list[Path]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from synthetic_records import write_records
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return write_records(tmp, n)


def _plant(data: dict[str, Any], i: int) -> dict[str, Any]:
    """Fake tokens in keys, values, a command line and nested lists of the free-form parts of a record."""
    out = copy.deepcopy(data)
    server = out["server"]
    server["command"] = [*server.get("command", ["serve"]), "--api-key", f"sk-plantedplanted{i:04d}", "--hf-token=x"]
    server.setdefault("args", {})
    server["args"].update(
        {
            "api-key": f"hf_AbCdEfGhIjKlMn{i:04d}",
            "pin_password": 1234,
            "token_budget": 17,
            "url": "https://user:pw@example.com/x?access_token=abc&n=1",
            "nested": [{"ghp_1234567890abcdefABCD": ["Bearer abcDEF.123456", "é ✓ ünïcode"]}, [1, 2.5, None, True]],
            "motd": "日本語 \u2028 and a ya29.abcdefghijklmnop token",
        }
    )
    return out


def _records(tmp: Path) -> list[Path]:
    paths = sorted(SHIPPED.rglob("*.json")) + sorted(FIXTURES.rglob("*.json")) + _synthetic(tmp / "synthetic", 40)
    planted = tmp / "planted"
    for i, path in enumerate(sorted(SHIPPED.rglob("*.json"))[:4] + _synthetic(tmp / "source", 12)[::3]):
        data = _plant(json.loads(path.read_text(encoding="utf-8")), i)
        target = planted / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=1 + i % 3, ensure_ascii=i % 2 == 0) + "\n", encoding="utf-8")
        paths.append(target)
    return paths


def test_the_same_record_and_bytes_as_the_plain_path(tmp_path: Path) -> None:
    changed = planted = 0
    for path in _records(tmp_path):
        loaded = load_record(path)
        got, want = _outcome(redacted_record, loaded), _outcome(_plain, loaded)
        assert got == want, path
        changed += got[0] == "ok" and got[2] != loaded.raw
        if "planted" in path.parts:
            planted += 1
            assert got[0] == "ok" and "sk-planted" not in got[2] and REDACTED in got[2]
    assert planted >= 8 and changed >= planted  # the raw text was written again for every planted record


def test_secrets_in_the_records_own_fields_are_hidden_the_same_way(tmp_path: Path) -> None:
    path = sorted(SHIPPED.rglob("*.json"))[0]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["server"]["version"] = "sk-abcdefghijklmnop1234"
    data["title"] = "ghp_1234567890abcdefABCD"
    target = tmp_path / path.parent.name / path.name
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")
    loaded = load_record(target)
    assert _outcome(redacted_record, loaded) == _outcome(_plain, loaded)


@pytest.mark.parametrize("damage", ["odd numbers", "ints among floats"])
def test_text_the_fast_writer_does_not_know(tmp_path: Path, damage: str) -> None:
    """A record file whose JSON holds what the plain writer writes its own way still gives the same bytes."""
    path = sorted(SHIPPED.rglob("*.json"))[0]
    data = _plant(json.loads(path.read_text(encoding="utf-8")), 0)
    if damage == "odd numbers":
        data["server"]["args"]["nested"].append({"k": [1e-7, 1e300, -0.0, 123456789012345678901234567890]})
    else:
        data["server"]["args"]["counts"] = [1.0, 2.0, 3]
    target = tmp_path / path.parent.name / path.name
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_record(target)
    assert _outcome(redacted_record, loaded) == _outcome(_plain, loaded)
