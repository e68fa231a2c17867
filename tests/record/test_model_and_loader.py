"""Schema, migration, loader and store: the contract every other part relies on."""

from __future__ import annotations

import importlib
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.record import (
    LoadedRecord,
    RecordError,
    create_record_file,
    iter_records,
    load_record,
    load_records,
    migrate,
    new_record_id,
    parse_record,
    replace_record_file,
)
from bench.record.model import Metric, Record

REPO = Path(__file__).resolve().parents[2]
migrate_mod = importlib.import_module("bench.record._migrate")


def minimal(variant: str = "baseline", **over: Any) -> dict[str, Any]:
    created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    data: dict[str, Any] = {
        "schema_version": 2,
        "id": f"20260102T030405Z-{variant}-abcdef1",
        "experiment": "exp",
        "variant": variant,
        "created_at": created.isoformat(),
        "provenance": {"kind": "measured", "tool": "benchbook"},
        "server": {"engine": "llama.cpp"},
        "model": {"name": "m"},
        "workload": {"prompt_set": "coding-agentic"},
        "levels": [
            {
                "concurrency": 1,
                "ttft_ms": {
                    "unit": "ms",
                    "formula": "ttft",
                    "p50": 10.0,
                    "p90": 12.0,
                    "p99": 13.0,
                    "mean": 10.5,
                    "n": 30,
                },
            }
        ],
        "status": {"state": "complete"},
    }
    data.update(over)
    return data


def write(root: Path, data: dict[str, Any], name: str | None = None) -> Path:
    path = root / data.get("experiment", "exp") / f"{name or data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_shipped_records_load_and_state_only_the_notes_figures() -> None:
    result = load_records(REPO / "records")
    assert result.errors == []
    by_variant = {r.record.variant: r.record for r in result.records if r.record.experiment == "eagle-fast-verify"}
    assert set(by_variant) == {"baseline", "eagle3"}
    for variant, per_req, total in (("baseline", 92.7, 773), ("eagle3", 80.9, 354)):
        rec = by_variant[variant]
        assert rec.provenance.kind == "transcribed" and rec.provenance.source
        assert [lv.key for lv in rec.levels] == ["1", "saturation"]
        c1, sat = rec.levels
        assert c1.per_request_tok_s is not None and c1.per_request_tok_s.value == per_req
        assert sat.total_throughput is not None and sat.total_throughput.value == total
        assert sat.total_throughput.approximate
        assert rec.model.name is None  # the notes do not name the model
        assert rec.environment.gpu.count == 8 and rec.environment.cuda_runtime == "13"


def test_metric_needs_a_figure_and_headline_prefers_stated_value() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Metric(unit="ms", formula="ttft")
    assert Metric(unit="ms", formula="f", mean=2.0, p50=1.0).headline() == 2.0
    assert Metric(unit="ms", formula="f", value=5.0, mean=2.0).headline() == 5.0


@pytest.mark.parametrize(
    ("mutate", "field", "expected"),
    [
        (lambda d: d.pop("workload"), "workload", "Field required"),
        (lambda d: d["levels"][0].__setitem__("concurrency", "many"), "levels[0].concurrency", "integer"),
        (lambda d: d["levels"][0]["ttft_ms"].pop("formula"), "levels[0].ttft_ms.formula", "Field required"),
        (lambda d: d.__setitem__("surprise", 1), "surprise", "Extra inputs"),
        (lambda d: d["provenance"].__setitem__("kind", "guessed"), "provenance.kind", "measured"),
        (lambda d: d.__setitem__("created_at", "2026-01-02T03:04:05"), "created_at", "UTC"),
    ],
)
def test_bad_fields_are_named(mutate: Any, field: str, expected: str, tmp_path: Path) -> None:
    data = minimal()
    mutate(data)
    path = write(tmp_path, data, name=minimal()["id"])
    with pytest.raises(RecordError) as info:
        load_record(path)
    assert info.value.field == field
    assert expected in info.value.expected
    assert str(path) in str(info.value)


def test_bad_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "exp" / "x.json"
    path.parent.mkdir()
    path.write_text('{\n  "schema_version": 1,\n  oops\n}', encoding="utf-8")
    with pytest.raises(RecordError, match=r"line 3 column 3.*valid JSON"):
        load_record(path)


def test_newer_schema_is_refused_with_upgrade_advice(tmp_path: Path) -> None:
    path = write(tmp_path, minimal(schema_version=99))
    with pytest.raises(RecordError, match="upgrade benchbook") as info:
        load_record(path)
    assert info.value.field == "schema_version"


def test_migrations_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def to2(d: dict[str, Any]) -> dict[str, Any]:
        seen.append(2)
        d["renamed"] = d.pop("old", None)
        return d

    def to3(d: dict[str, Any]) -> dict[str, Any]:
        seen.append(3)
        d["added"] = True
        return d

    monkeypatch.setattr(migrate_mod, "MIGRATIONS", {2: to2, 3: to3})
    out = migrate_mod.migrate({"schema_version": 1, "old": "x"}, "f.json", current=3)
    assert seen == [2, 3]
    assert out == {"schema_version": 3, "renamed": "x", "added": True}
    monkeypatch.setattr(migrate_mod, "MIGRATIONS", {})
    with pytest.raises(RecordError, match="migration step to version 2"):
        migrate({"schema_version": 1}, "f.json", current=2)


def test_layout_and_duplicates_are_errors_but_good_records_still_load(tmp_path: Path) -> None:
    good = write(tmp_path, minimal())
    dup = minimal()
    write(tmp_path, dup, name="20260102T030405Z-baseline-abcdef2")  # file name differs from id
    other = minimal("candidate")
    other_path = tmp_path / "exp" / "sub" / f"{other['id']}.json"
    other_path.parent.mkdir(parents=True)
    other_path.write_text(json.dumps(other), encoding="utf-8")
    result = load_records(tmp_path)
    assert [r.path for r in result.records] == [good]
    messages = "\n".join(str(e) for e in result.errors)
    assert "file name without .json" in messages
    assert "records/<experiment>/<id>.json" in messages


def test_duplicate_id_is_reported_with_both_files(tmp_path: Path) -> None:
    a = minimal()
    write(tmp_path, a)
    b = dict(a, experiment="other")
    path_b = write(tmp_path, b)
    result = load_records(tmp_path)
    assert len(result.records) == 1
    [err] = result.errors
    assert err.path == str(path_b) and err.field == "id" and "also used by" in err.expected


def test_records_are_read_one_at_a_time_in_path_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``iter_records`` loads a file only when the next one is asked for, and gives the errors ``load_records``
    gives, in path order; ``bench validate`` of a folder counts them that way (a folder of 10,000 records is never
    held: 4.75 GiB peak before, 73 MiB after)."""
    a = minimal()
    path_a = write(tmp_path, a)
    path_b = write(tmp_path, dict(a, experiment="other"))  # the same id in another folder
    path_c = write(tmp_path, minimal("candidate"))
    loaded: list[str] = []

    def load(path: Path) -> LoadedRecord:
        loaded.append(path.parent.name)
        return load_record(path)

    found = iter_records(tmp_path, load=load)
    first = next(found)
    assert isinstance(first, LoadedRecord) and first.path == path_a and loaded == ["exp"]
    rest = list(found)
    assert [r.path if isinstance(r, LoadedRecord) else (r.path, r.field) for r in rest] == [path_c, (str(path_b), "id")]
    assert loaded == ["exp", "exp", "other"]
    whole = load_records(tmp_path)
    assert [r.path for r in whole.records] == [path_a, path_c]
    assert [str(e) for e in whole.errors] == [str(r) for r in rest if isinstance(r, RecordError)]
    from bench.cli import main

    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert out.out.strip() == "2 valid record(s), 1 error(s)" and str(path_b) in out.err


def test_store_is_atomic_and_exclusive(tmp_path: Path) -> None:
    rec = parse_record(minimal(), "mem")
    path = create_record_file(tmp_path, rec)
    assert load_record(path).record == rec
    with pytest.raises(FileExistsError):
        create_record_file(tmp_path, rec)
    updated = rec.model_copy(update={"status": rec.status.model_copy(update={"state": "partial"})})
    replace_record_file(path, updated)
    assert load_record(path).record.status.state == "partial"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left behind


def test_concurrent_runs_never_share_a_file(tmp_path: Path) -> None:
    created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ids = {new_record_id("baseline", created) for _ in range(200)}
    assert len(ids) == 200
    paths: list[Path] = []
    errors: list[BaseException] = []

    def one(i: int) -> None:
        data = minimal(id=new_record_id("baseline", created))
        try:
            paths.append(create_record_file(tmp_path, Record.model_validate(data)))
        except BaseException as exc:  # pragma: no cover - would fail the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(paths)) == 16
    assert len(os.listdir(tmp_path / "exp")) == 16


def test_committed_json_schema_is_current() -> None:
    from bench.record.commands import SCHEMA_FILE, json_schema

    assert SCHEMA_FILE.read_text(encoding="utf-8") == json_schema(), "run `bench schema --write`"


def test_validate_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.cli import main

    assert main(["validate", str(REPO / "records")]) == 0
    bad = write(tmp_path, minimal(levels="nope"))
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "levels" in err


def test_dump_and_reload_round_trips_none_fields() -> None:
    from bench.record import dump_record

    rec = parse_record(minimal(speculative={"algorithm": None}, draft_model={"name": None}), "mem")
    again = parse_record(json.loads(dump_record(rec)), "mem")
    assert again == rec and again.speculative is not None and again.speculative.algorithm is None


# ---------------------------------------------------------------------------------------------------------------------
# Schema v2: migration from v1, non-finite numbers, text caps, the test server's identity


def test_v1_attached_record_migrates_with_claims_and_failed_levels(tmp_path: Path) -> None:
    v1 = minimal(schema_version=1, speculative={"algorithm": "EAGLE3", "topk": 4})
    v1["levels"][0]["errors"] = {"by_kind": {"http_5xx": 9}, "error_rate": 0.9, "flagged": True}
    rec = load_record(write(tmp_path, v1)).record
    assert rec.schema_version == 2
    # attached (no server.command): what the v1 config said is a claim now, not an observation
    assert rec.claims == ["model.name", "speculative"]
    assert rec.is_claimed("speculative.topk") and not rec.is_claimed("model.sha256")
    assert rec.levels[0].failed and "90%" in (rec.levels[0].failure or "")


def test_v1_launched_record_has_no_claims(tmp_path: Path) -> None:
    v1 = minimal(schema_version=1, server={"engine": "llama.cpp", "command": ["llama-server", "-m", "x.gguf"]})
    assert load_record(write(tmp_path, v1)).record.claims == []


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('"mean": NaN', "levels[0].ttft_ms.mean"),
        ('"mean": Infinity', "levels[0].ttft_ms.mean"),
        ('"mean": -Infinity', "levels[0].ttft_ms.mean"),
    ],
)
def test_non_finite_numbers_are_refused_with_the_field(text: str, field: str, tmp_path: Path) -> None:
    path = write(tmp_path, minimal())
    raw = path.read_text(encoding="utf-8").replace('"mean": 10.5', text)
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(RecordError) as info:
        load_record(path)
    assert info.value.field == field
    assert "finite number" in info.value.expected


def test_non_finite_numbers_in_free_form_dicts_are_refused_too() -> None:
    data = minimal(server={"engine": "sglang", "server_info": {"x": [1.0, float("nan")]}})
    with pytest.raises(RecordError) as info:
        parse_record(data, "r.json")
    assert info.value.field == "server.server_info.x[1]"


def test_free_text_is_capped_with_the_limit_named() -> None:
    from bench.record.model import TEXT_LIMITS

    with pytest.raises(RecordError) as info:
        parse_record(minimal(title="x" * (TEXT_LIMITS["title"] + 1)), "r.json")
    assert info.value.field == "title"
    assert str(TEXT_LIMITS["title"]) in info.value.expected
    parse_record(minimal(title="x" * TEXT_LIMITS["title"]), "r.json")  # exactly at the limit is fine


def test_a_record_from_the_test_server_cannot_claim_a_real_engine() -> None:
    observed = {"engine": "benchbook-testserver", "sources": {"engine": "header x-benchbook-test-server"}}
    with pytest.raises(RecordError) as info:
        parse_record(minimal(server={"engine": "sglang", "observed": observed}), "r.json")
    assert "test_server" in info.value.expected
    prov = {"kind": "measured", "tool": "benchbook", "test_server": True}
    parse_record(minimal(server={"engine": "sglang", "observed": observed}, provenance=prov), "r.json")


def test_v1_measured_records_state_the_prompts_were_sent_as_written(tmp_path: Path) -> None:
    measured = load_record(write(tmp_path, minimal(schema_version=1))).record
    assert measured.workload.prefix == "repeated"
    transcribed = minimal(schema_version=1, variant="t", provenance={"kind": "transcribed", "source": "lab notes"})
    assert load_record(write(tmp_path, transcribed)).record.workload.prefix is None
