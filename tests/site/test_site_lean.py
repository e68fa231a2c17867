"""The site holds its records lean: no sample values and no JSON text in memory, both read back when asked, with
the same pages as before (the golden and page tests) and nothing silently missing."""

from __future__ import annotations

import json
import pickle
import sys
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from site_helpers import DOCS, SHIPPED

from bench.record.errors import RecordError
from bench.record.load import load_record
from bench.site import SiteCache, load_site
from bench.site._lean import SamplesNotLoaded, SharedValues, SiteRecord, UnloadedSamples, lean, whole_record
from bench.site._site_load import redacted_record
from bench.site._site_records import KEYS_SHARED, _dumps, _loads, _model


@pytest.mark.parametrize("cached", [False, True])
def test_records_are_lean_and_whole_on_demand(records: Path, tmp_path: Path, cached: bool) -> None:
    cache = SiteCache(tmp_path / "cache", version="v1") if cached else None
    site = load_site(records, DOCS, cache=cache)
    with_samples = 0
    for lr in site.records:
        assert isinstance(lr, SiteRecord) and "raw" not in vars(lr)
        expected = redacted_record(load_record(lr.path))
        whole = site.whole(lr.record)
        assert whole == expected.record and lr.raw == expected.raw
        for lv, full in zip(lr.record.levels, whole.levels, strict=True):
            if full.samples is None:
                assert lv.samples is None
                continue
            with_samples += 1
            assert isinstance(lv.samples.ttft_ms, UnloadedSamples)
            assert len(lv.samples.ttft_ms) == len(full.samples.ttft_ms)
            assert full.samples.ttft_ms and all(isinstance(x, float) for x in full.samples.ttft_ms)
            with pytest.raises(SamplesNotLoaded):
                list(lv.samples.ttft_ms)
            with pytest.raises(SamplesNotLoaded):
                _ = lv.samples.e2e_ms[0]
    assert with_samples > 10


def test_runs_are_whole(records: Path) -> None:
    site = load_site(records, DOCS)
    for lr in site.records:
        for run in site.runs(lr.record):
            assert not any(isinstance(lv.samples.ttft_ms, UnloadedSamples) for lv in run.levels if lv.samples)


def test_lean_and_back_is_the_record() -> None:
    record = load_record(next(SHIPPED.glob("h200-ngram/*.json"))).record
    slim, samples = lean(record, SharedValues())
    assert any(s is not None for s in samples)
    assert whole_record(slim, samples) == record
    assert whole_record(pickle.loads(pickle.dumps(slim)), pickle.loads(pickle.dumps(samples))) == record
    assert len(pickle.dumps(slim)) < len(pickle.dumps(record)) - sum(len(pickle.dumps(s)) for s in samples) // 2
    with pytest.raises(ValueError):
        whole_record(slim, samples[:-1])


def test_a_record_changed_during_the_build_is_an_error_not_a_mixed_page(records: Path) -> None:
    site = load_site(records, DOCS)
    lr = next(r for r in site.records if r.path.parent.name == "h200-ngram")
    data = json.loads(lr.path.read_text(encoding="utf-8"))
    data["title"] = "changed while the site was built"
    lr.path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(RecordError) as info:
        _ = lr.raw
    assert info.value.path == str(lr.path) and "changed during the build" in info.value.expected


def _strings_and_sets(value: object, out: list[object]) -> list[object]:
    """Every string value and fields-given set inside a model tree (depth first, in order)."""
    if isinstance(value, BaseModel):
        out.append(value.__pydantic_fields_set__)
        for v in value.__dict__.values():
            _strings_and_sets(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _strings_and_sets(v, out)
    elif type(value) in (list, tuple):
        for v in value:  # type: ignore[attr-defined]
            _strings_and_sets(v, out)
    elif type(value) is str:
        out.append(value)
    return out


def test_records_read_back_from_the_cache_share_their_strings_and_sets(records: Path, tmp_path: Path) -> None:
    """A warm build's records (unpickled from the site cache) equal a cold build's, and every equal string and
    fields-given set among all of them is one object, as ``share`` makes them in a cold build."""
    cache = SiteCache(tmp_path / "cache", version="v1")
    cold = load_site(records, DOCS, cache=cache)
    warm_cache = SiteCache(tmp_path / "cache", version="v1")
    warm = load_site(records, DOCS, cache=warm_cache)
    assert warm_cache.hits >= len(warm.records) > 10 and warm_cache.misses == 0
    # (lean samples equal only themselves: compared as dumped, and by their lengths)
    assert [r.record.model_dump(mode="json") for r in warm.records] == [
        r.record.model_dump(mode="json") for r in cold.records
    ]
    lengths = [[len(lv.samples.ttft_ms) if lv.samples else -1 for lv in r.record.levels] for r in cold.records]
    assert [[len(lv.samples.ttft_ms) if lv.samples else -1 for lv in r.record.levels] for r in warm.records] == lengths
    assert warm.record_rows == cold.record_rows
    for site in (cold, warm):
        values = [v for lr in site.records for v in _strings_and_sets(lr.record, [])]
        rows = [c for lr in site.records for row in site.record_rows[lr.record.id] for c in row if type(c) is str]
        by_value: dict[object, int] = {}
        for v in [*values, *rows]:
            key = ("set", tuple(sorted(v))) if isinstance(v, set) else v
            by_value.setdefault(key, id(v))
            assert by_value[key] == id(v), f"{key!r} is held twice"
        assert sum(isinstance(v, set) for v in values) > 100 and len(by_value) < len(values) / 5


def _models(value: object, out: list[BaseModel]) -> list[BaseModel]:
    if isinstance(value, BaseModel):
        out.append(value)
        for v in value.__dict__.values():
            _models(v, out)
    elif type(value) is list or type(value) is tuple:
        for v in value:
            _models(v, out)
    elif type(value) is dict:
        for v in value.values():
            _models(v, out)
    return out


def test_models_read_back_from_the_cache_share_a_table_of_field_names_per_class(records: Path, tmp_path: Path) -> None:
    """A model unpickled from the site cache keeps its fields as the interpreter keeps a class's attributes: where
    it shares keys, its ``__dict__`` holds only the values, under keys shared by the class (a dict of its own, as
    pydantic's state gives it, takes twice the memory), else a dict made at its size; and it is the same model:
    equal fields, fields given, extra and private state."""
    cache = SiteCache(tmp_path / "cache", version="v1")
    cold = load_site(records, DOCS, cache=cache)
    warm = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    models = [m for lr in warm.records for m in _models(lr.record, [])]
    cold_models = [m for lr in cold.records for m in _models(lr.record, [])]
    assert len(models) == len(cold_models) > 1000
    held = own = 0
    for m, c in zip(models, cold_models, strict=True):
        assert type(m) is type(c) and list(m.__dict__) == list(c.__dict__)
        assert m.__pydantic_fields_set__ == c.__pydantic_fields_set__
        assert (m.__pydantic_extra__, m.__pydantic_private__) == (c.__pydantic_extra__, c.__pydantic_private__)
        held += sys.getsizeof(m.__dict__)
        own += sys.getsizeof(dict(m.__dict__))  # the same fields in a dict of their own
    # (a class of more than 30 fields, the interpreter's limit for shared keys, keeps a dict per instance)
    assert held < (0.6 if KEYS_SHARED else 1.0001) * own, (
        f"the models' fields take {held} bytes, {held / own:.0%} of {own} in dicts of their own"
    )
    # a dict field (a server's own report, a level's finish reasons) is one object per value across the records
    dicts: dict[str, int] = {}
    for m in models:
        for name, v in m.__dict__.items():
            if type(v) is dict and v:
                key = json.dumps([type(m).__name__, name, v])
                assert dicts.setdefault(key, id(v)) == id(v), f"{type(m).__name__}.{name} is held twice"
    repeated = sum(type(v) is dict and bool(v) for m in models for v in m.__dict__.values())
    assert repeated > 2 * len(dicts) > 20
    # a whole record (samples and all) through the cache's pickling is equal to itself
    whole = load_record(sorted(SHIPPED.rglob("*.json"))[0])
    again = _loads(_dumps(whole.record), SharedValues())
    assert again == whole.record and again is not whole.record
    assert again.model_dump_json() == whole.record.model_dump_json()


def test_the_interpreters_key_sharing_is_what_was_measured() -> None:
    """3.11 and 3.12 share a class's keys among pydantic models' attribute dicts; 3.13.0 does not (its classes with
    slots beside ``__dict__`` keep a dict per instance)."""
    if sys.version_info[:2] in ((3, 11), (3, 12)):
        assert KEYS_SHARED
    elif sys.version_info[:2] == (3, 13):
        assert not KEYS_SHARED


def test_a_model_read_back_takes_no_more_memory_than_pydantics_own_layout() -> None:
    """As the allocator counts it (tracemalloc, 20,000 models of a record class of 7 fields): the cache's way of
    building a model against the whole ``__dict__`` that pydantic's own state gives; under three quarters of it where
    the interpreter shares keys, elsewhere no more (within 1 %: 568 bytes a model for both on 3.13.0)."""
    from bench.record.model import ClientLoad

    names = tuple(ClientLoad.model_fields)
    values = tuple(None for _ in names)
    set_ = object.__setattr__

    def read_back() -> list[BaseModel]:
        return [_model(ClientLoad, names, values, set(), None, None) for _ in range(20_000)]

    def pydantic_layout() -> list[BaseModel]:
        out = []
        for _ in range(20_000):
            obj = ClientLoad.__new__(ClientLoad)
            set_(obj, "__dict__", dict(zip(names, values, strict=True)))
            set_(obj, "__pydantic_fields_set__", set())
            set_(obj, "__pydantic_extra__", None)
            set_(obj, "__pydantic_private__", None)
            out.append(obj)
        return out

    traced = []
    for build in (read_back, pydantic_layout):
        tracemalloc.start()
        kept = build()
        traced.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
        del kept
    ours, theirs = traced
    assert ours < (0.75 if KEYS_SHARED else 1.01) * theirs, f"{ours} against {theirs} bytes"


def test_a_records_fingerprint_comes_with_its_cache_entry(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fingerprint a site holds for a record is ``bench.compare.fingerprint`` of it; a warm build takes it from
    the record's cache entry (not computed again), and the configurations it groups are a cold build's."""
    import bench.site._site_data as site_data
    from bench.compare import fingerprint

    cold = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    want = {lr.record.id: fingerprint(lr.record) for lr in cold.records}
    assert cold.fingerprints == want and len(set(want.values())) > 3

    def refuse(record: object) -> str:
        raise AssertionError("a fingerprint computed again")

    monkeypatch.setattr(site_data, "fingerprint", refuse)
    warm = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    assert warm.fingerprints == want
    assert {k: [r.id for r in v] for k, v in warm.configurations.items()} == {
        k: [r.id for r in v] for k, v in cold.configurations.items()
    }


def test_a_warm_build_reads_only_the_small_part_of_each_records_entry(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each record's cache entry is two files: what every build reads (lean record, rows, their text), compressed
    and without samples or redacted text, and the samples and redacted text, read only when the whole record or its
    redacted JSON is asked for; with that second file gone the record is read back from its file."""
    from bench.site import _site_records as sr

    cold = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    small = sorted((tmp_path / "cache").rglob(f"{sr.KIND}/*/*.pickle"))
    whole_files = sorted((tmp_path / "cache").rglob(f"{sr.WHOLE_KIND}/*/*.pickle"))
    assert len(small) == len(whole_files) == len(cold.records)
    for path in small:
        entry = pickle.loads(zlib.decompress(path.read_bytes()))
        assert {"lean", "rows", "text"} <= set(entry) and not {"samples", "raw"} & set(entry)

    peeked: list[str] = []
    real_peek = SiteCache.peek

    def peek(self: SiteCache, kind: str, key: str, **kw: bool) -> object:
        peeked.append(kind)
        return real_peek(self, kind, key, **kw)

    monkeypatch.setattr(SiteCache, "peek", peek)
    warm = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    assert sr.WHOLE_KIND not in peeked and peeked.count(sr.KIND) == len(warm.records)
    by_id = {lr.record.id: lr for lr in warm.records}
    for lr in cold.records:
        expected = redacted_record(load_record(lr.path))
        assert warm.whole(by_id[lr.record.id].record) == expected.record and by_id[lr.record.id].raw == expected.raw
    assert sr.WHOLE_KIND in peeked
    for p in whole_files:
        p.unlink()
    again = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache", version="v1"))
    for lr in again.records:
        expected = redacted_record(load_record(lr.path))
        assert again.whole(lr.record) == expected.record and lr.raw == expected.raw


def test_a_dict_json_would_change_is_pickled_as_itself() -> None:
    """Only a dict that JSON gives back equal is shared by its text: one with a tuple, a number as key, a NaN or
    a value JSON cannot write comes back as it was, its own object."""
    from bench.record.model import Recipe

    nan = float("nan")
    table = SharedValues()
    kept: list[dict[Any, Any]] = [{"a": (1, 2)}, {1: "x"}, {"x": nan}, {"x": {1, 2}}]
    for config in [*kept, {"a": [1, 2.5, None, True, "é"]}]:
        back = _loads(_dumps(Recipe.model_construct(config=config)), table).config
        shared = any(v is back for v in table.values())
        assert shared == (config not in kept), config
        assert repr(back) == repr(config)
        assert [type(v) for v in back.values()] == [type(v) for v in config.values()]
