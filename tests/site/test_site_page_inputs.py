"""The keys of experiment and history pages (bench/site/_page_inputs.py): one change at a time, every page whose key
stayed the same has the same Markdown, the changed page's key changed, and pages elsewhere kept theirs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from site_helpers import DOCS

from bench.git import RecordCommit
from bench.record.model import Record
from bench.settings import RegressionThresholds, Settings
from bench.site import SiteCache, SiteData, experiment_markdown, load_site, site_pages
from bench.site._git_info import GitInfo
from bench.site._history_pages import history_pages
from bench.site._page_inputs import configuration_key, experiment_key, records_list_key
from bench.site._paths import experiment_page, history_page
from bench.site._records_pages import experiment_record_lists, experiment_records_page

Pages = dict[str, tuple[str, str]]
PER_PAGE = 2  # the records index split into lists of two: the shipped records fill several parts


def _pages(site: SiteData) -> Pages:
    """page -> (its key, its Markdown)."""
    out: Pages = {}
    for exp in site.all_experiments:
        out[experiment_page(exp)] = (experiment_key(site, exp), experiment_markdown(site, exp))
    for key in site.configurations:
        ckey = configuration_key(site, key)
        for path, markdown in history_pages(site, key):  # every page of the history
            out[path] = (ckey, markdown)
    for exp in site.experiments:
        lkey = records_list_key(site, exp, PER_PAGE)
        for path, markdown in experiment_record_lists(site, exp, PER_PAGE):  # every part of the experiment's list
            out[path] = (lkey, markdown)
    return out


def _changed(before: Pages, after: Pages) -> set[str]:
    """The pages whose key changed; fails if a page kept its key and not its Markdown."""
    same_key = [p for p in before.keys() & after.keys() if before[p][0] == after[p][0]]
    stale = [p for p in same_key if before[p][1] != after[p][1]]
    assert stale == [], f"same key, other Markdown: {stale}"
    return {p for p in before.keys() & after.keys() if before[p][0] != after[p][0]}


def _record(records: Path, experiment: str) -> tuple[Path, dict[str, object]]:
    path = sorted((records / experiment).glob("*.json"))[-1]
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_a_changed_record_changes_its_pages_keys_only(records: Path) -> None:
    before = _pages(load_site(records, DOCS))
    path, data = _record(records, "h200-sglang")
    data["description"] = "A description added later."
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    changed = _changed(before, _pages(load_site(records, DOCS)))
    assert experiment_page("h200-sglang") in changed
    assert experiment_page("h200-ngram") not in changed and experiment_page("eagle-fast-verify") not in changed
    assert any(p.startswith("history/") for p in changed)
    assert experiment_records_page("h200-sglang") in changed and experiment_records_page("h200-ngram") not in changed
    assert len(changed) < len(before) / 2


def test_a_new_record_changes_its_experiment_and_configuration(records: Path) -> None:
    before = _pages(load_site(records, DOCS))
    path, data = _record(records, "h200-ngram")
    stamp = "20261202T120000Z"
    rid = f"{stamp}-{str(data['id']).split('-', 1)[1]}"
    data["id"] = rid
    data["created_at"] = datetime(2026, 12, 2, 12, 0, tzinfo=UTC).isoformat().replace("+00:00", "Z")
    (path.parent / f"{rid}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    after_site = load_site(records, DOCS)
    assert rid in after_site.by_id, after_site.errors
    after = _pages(after_site)
    changed = _changed(before, after)
    assert experiment_page("h200-ngram") in changed
    assert history_page(after_site.configuration_of[rid]) in changed
    assert experiment_page("h200-sglang") not in changed
    assert experiment_records_page("h200-ngram") in changed and experiment_records_page("h200-sglang") not in changed
    # the other configurations of the experiment keep their pages (their records did not change)
    others = {after_site.configuration_of[lr.record.id] for lr in after_site.experiments["h200-ngram"]}
    others.discard(after_site.configuration_of[rid])
    assert others and not any(history_page(k) in changed for k in others)


def test_settings_and_commits_and_dead_ends_are_inputs(records: Path, tmp_path: Path) -> None:
    site = load_site(records, DOCS)
    before = _pages(site)
    stricter = Settings(regression=RegressionThresholds(ratio_threshold=0.01))
    assert _changed(before, _pages(load_site(records, DOCS, settings=stricter))) == set(before)
    old = RecordCommit("a" * 40, "aaaaaaa", "someone", datetime(2026, 12, 1, tzinfo=UTC), "Add records")
    new = RecordCommit("b" * 40, "bbbbbbb", "someone", datetime(2026, 12, 2, tzinfo=UTC), "Add a record")
    commits = {r.record.id: old for r in site.records}
    in_git = _pages(replace(site, git=GitInfo(commits=commits)))
    rid = site.experiments["h200-sglang"][-1].record.id
    changed = _changed(in_git, _pages(replace(site, git=GitInfo(commits={**commits, rid: new}))))
    assert experiment_page("h200-sglang") in changed and experiment_page("h200-ngram") not in changed
    assert experiment_records_page("h200-sglang") in changed and experiment_records_page("h200-ngram") not in changed
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    dead_end = docs / "dead-ends" / "ngram-default-batch.md"
    text = dead_end.read_text(encoding="utf-8")
    dead_end.write_text(text.replace("title: n-gram speculation", "title: N-gram speculation", 1), encoding="utf-8")
    changed = _changed(before, _pages(load_site(records, docs)))
    assert experiment_page("h200-ngram") in changed and experiment_page("h200-sglang") not in changed


@contextmanager
def _counting_experiment_pages() -> Iterator[list[str]]:
    """The experiments whose page Markdown is made in this process while the block runs."""
    import bench.site._pages as pages_module

    made: list[str] = []
    real = pages_module.experiment_markdown

    def counting(site: SiteData, experiment: str) -> str:
        made.append(experiment)
        return real(site, experiment)

    pages_module.experiment_markdown = counting  # type: ignore[assignment]
    try:
        yield made
    finally:
        pages_module.experiment_markdown = real  # type: ignore[assignment]


def test_kept_pages_are_read_back_not_made_again(records: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = dict(site_pages(load_site(records, DOCS, cache=SiteCache(cache))))
    site = load_site(records, DOCS, cache=SiteCache(cache))
    with _counting_experiment_pages() as made:
        second = dict(site_pages(site))
    assert made == []
    assert second == first


def test_under_serve_the_last_builds_pages_and_flags_are_reused_while_their_inputs_hold(
    records: Path, tmp_path: Path
) -> None:
    from bench.site import keep_loaded_records

    keep_loaded_records()
    try:
        cache = tmp_path / "cache"
        first_site = load_site(records, DOCS, cache=SiteCache(cache))
        first = dict(site_pages(first_site))
        flags = first_site.configuration_flags
        path, data = _record(records, "h200-sglang")
        data["description"] = "Changed under serve."
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        site = load_site(records, DOCS, cache=SiteCache(cache))
        second = dict(site_pages(site))
        fresh = dict(site_pages(load_site(records, DOCS)))
        assert second == fresh  # the same pages as a build that keeps nothing
        assert second[experiment_page("h200-sglang")] != first[experiment_page("h200-sglang")]
        changed = site.configuration_of[str(data["id"])]
        for key, found in site.configuration_flags.items():  # unchanged configurations: the same flag lists
            assert (found is flags[key]) == (key != changed), key
    finally:
        keep_loaded_records(False)


def test_a_warm_build_takes_unchanged_configurations_flags_from_the_cache(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.site._site_data as site_data

    cache = tmp_path / "cache"
    cold = load_site(records, DOCS, cache=SiteCache(cache)).configuration_flags
    assert cold == load_site(records, DOCS).configuration_flags and any(cold.values())
    path, data = _record(records, "h200-sglang")
    data["description"] = "Changed since the last build."
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    computed: list[str] = []
    real = site_data.flags

    def counting(recs: list[Record], th: Any) -> Any:
        computed.extend(r.id for r in recs)
        return real(recs, th)

    monkeypatch.setattr(site_data, "flags", counting)
    warm_site = load_site(records, DOCS, cache=SiteCache(cache))
    warm = warm_site.configuration_flags
    changed = warm_site.configuration_of[str(data["id"])]
    assert set(computed) == {r.id for r in warm_site.configurations[changed]}  # only the changed configuration
    assert warm == load_site(records, DOCS).configuration_flags


def test_pages_made_in_several_processes_are_the_pages_made_in_one(records: Path, tmp_path: Path) -> None:
    one = dict(site_pages(load_site(records, DOCS, cache=SiteCache(tmp_path / "one"))))
    site = load_site(records, DOCS, cache=SiteCache(tmp_path / "two"))
    with _counting_experiment_pages() as made:  # in this process (a child's list is its own)
        two = dict(site_pages(site, workers=2))
    assert two == one
    # every page was missing: taken from one queue, experiments first, each made once, by a child or here
    assert len(site.all_experiments) >= 2 and len(set(made)) == len(made)
    assert made == [e for e in site.all_experiments if e in made]


def test_a_build_too_large_to_fork_makes_its_pages_as_they_are_asked_for(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.site._page_inputs as page_inputs

    monkeypatch.setattr(page_inputs, "FORK_RESIDENT_MAX", 2**20)  # this process holds more: no child would share it
    monkeypatch.setattr(page_inputs, "CHUNKED_RESIDENT_MAX", 2**20)  # nor a child of a few pages
    site = load_site(records, DOCS, cache=SiteCache(tmp_path / "cache"))
    with _counting_experiment_pages() as made:
        pages = site_pages(site, workers=2)
        next(pages)  # the records index: nothing made ahead of it, in this process or for the cache
        assert made == []
        rest = dict(pages)
    assert made == site.all_experiments
    assert rest == {k: v for k, v in site_pages(load_site(records, DOCS)) if k != "records/index.md"}


def test_a_large_build_makes_its_pages_in_children_of_a_few_jobs_each(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.site._page_inputs as page_inputs

    one = dict(site_pages(load_site(records, DOCS, cache=SiteCache(tmp_path / "one"))))
    monkeypatch.setattr(page_inputs, "FORK_RESIDENT_MAX", 2**20)  # too large for one child to the end
    monkeypatch.setattr(page_inputs, "JOBS_PER_CHILD", 1)
    calls: list[tuple[int, int | None, int]] = []
    real = page_inputs.in_workers

    def counting(items: Any, *args: Any, **kwargs: Any) -> int:
        ended = real(items, *args, **kwargs)
        calls.append((len(items), kwargs.get("per_child"), ended))
        return ended

    monkeypatch.setattr(page_inputs, "in_workers", counting)
    site = load_site(records, DOCS, cache=SiteCache(tmp_path / "two"))
    with _counting_experiment_pages() as made:
        two = dict(site_pages(site, workers=2))
    assert two == one
    ((jobs, per_child, ended),) = calls
    # one job per child: the children that ended well are as many as the jobs they took (the rest were made here)
    assert per_child == 1 and jobs >= page_inputs.MIN_PARALLEL and ended >= 2
    assert ended + len(made) >= len(site.all_experiments)


def test_the_comparison_downloads_of_a_childs_experiments_are_made_there(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.site._comparisons as comparisons

    made: list[str] = []  # comparisons whose downloads were made in this process
    real = comparisons.comparison_downloads

    def counting(c: Any) -> Any:
        made.append(f"{c.ids_a[0]} vs {c.ids_b[0]}")
        return real(c)

    monkeypatch.setattr(comparisons, "comparison_downloads", counting)
    one = dict(site_pages(load_site(records, DOCS, cache=SiteCache(tmp_path / "one"))))
    alone, made[:] = list(made), []
    two = dict(site_pages(load_site(records, DOCS, cache=SiteCache(tmp_path / "two")), workers=2))
    assert two == one
    assert set(made) < set(alone)  # the child's share of the experiments' comparison downloads came from the cache


def test_under_serve_repeat_spreads_are_kept_per_group_while_its_records_hold(
    records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.site._site_data as site_data
    from bench.compare import repeat_spreads
    from bench.site import keep_loaded_records

    def truth(site: SiteData) -> list[Any]:
        return repeat_spreads((lr.record for lr in site.records), fingerprint_of=site.fingerprint_of)

    keep_loaded_records()
    try:
        first_site = load_site(records, DOCS)
        first = first_site.repeat_spreads
        assert first == truth(first_site) and len({(s.run_group, s.variant) for s in first}) >= 2
        grouped = [lr.record for lr in first_site.records if lr.record.run_group is not None]
        target = next(r for r in grouped if sum(x.run_group == r.run_group for x in grouped) >= 2)
        path = next(p for p in records.rglob("*.json") if p.stem == target.id)
        data = json.loads(path.read_text(encoding="utf-8"))
        for level in data["levels"]:  # one run of one group measured faster: its group's spreads change
            if isinstance(level.get("output_throughput"), dict):
                level["output_throughput"]["value"] *= 1.5
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        computed: list[list[str]] = []
        real = site_data.group_spreads

        def counting(runs: Any, *args: Any) -> Any:
            computed.append([r.id for r in runs])
            return real(runs, *args)

        monkeypatch.setattr(site_data, "group_spreads", counting)
        site = load_site(records, DOCS)
        again = site.repeat_spreads
        assert again == truth(site) and again != first  # what a build that keeps nothing finds
        assert len(computed) == 1 and target.id in computed[0]  # only the changed record's group computed again
    finally:
        keep_loaded_records(False)
