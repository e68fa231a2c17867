"""The gate reads a tree one file at a time and holds whole only the records it uses: the records a change adds, and
on the base those of their experiments and configurations (what the report compares them with). A file the base and
the head share is loaded once. Before, every record of both trees was held whole, with its bytes: 1,026 MiB for a
change adding one record to 1,000 (benchmarks/gate_scale.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from gate_helpers import BASELINE, EAGLE, SHIPPED, GitRepo, new_record

import bench.gate._snapshot as snapshot
from bench.gate import run_check
from bench.gate._snapshot import Summary, content_hash, load_tree, worktree_files
from bench.git import blob_id, files_at, open_repo
from bench.record import Record, load_record
from bench.testing.spy import note_paths

EXP = "records/eagle-fast-verify"


def _elsewhere(record_id: str, experiment: str = "other-experiment", **changes: Any) -> dict[str, Any]:
    data = new_record(record_id)
    data["experiment"] = experiment
    data.update(changes)
    return data


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the gate loads (their paths as judged), in order."""
    return note_paths(monkeypatch, snapshot, "load_record")


def test_only_the_compared_base_records_are_held_and_each_shared_file_is_loaded_once(
    repo: GitRepo, add_record: Callable[..., str], loads: list[str]
) -> None:
    unrelated = _elsewhere("20261201T080000Z-baseline-0000001", variant="baseline")
    same_configuration = _elsewhere("20261201T080500Z-eagle3-0000002", experiment="another-experiment")
    repo.write_json(f"records/other-experiment/{unrelated['id']}.json", unrelated)
    repo.write_json(f"records/another-experiment/{same_configuration['id']}.json", same_configuration)
    repo.commit_all("two more experiments on main")
    repo.git("branch", "-f", "main", "HEAD")
    rel = add_record()
    result = run_check(repo.root, "main")
    assert result.ok, result.failures
    # the added record's own experiment, and its configuration's history in another experiment; not the unrelated one
    assert set(result.base_records) == {
        f"{EXP}/{EAGLE}.json",
        f"{EXP}/{BASELINE}.json",
        f"records/another-experiment/{same_configuration['id']}.json",
    }
    assert all(isinstance(r, Record) for r in result.base_records.values())
    # every file once: the added one first (what it is decides which base records are held whole), then the base's
    # four in path order, each held whole or summarised in that one load; the head shares them and loads none again
    base = sorted(
        [
            f"{EXP}/{EAGLE}.json",
            f"{EXP}/{BASELINE}.json",
            f"records/other-experiment/{unrelated['id']}.json",
            f"records/another-experiment/{same_configuration['id']}.json",
        ]
    )
    assert loads == [rel.rsplit("/", 1)[1], *(p.rsplit("/", 1)[1] for p in base)]


def test_in_the_work_tree_only_what_the_change_adds_is_loaded(repo: GitRepo, loads: list[str]) -> None:
    """``--worktree``: a file's bytes are read for its git object id; a file the base holds with the same bytes is
    not read or loaded again (the base's load stands for it), so only the added record is loaded from the work tree."""
    data = new_record()
    rel = f"records/{data['experiment']}/{data['id']}.json"
    repo.write_json(rel, data)  # not committed
    result = run_check(repo.root, "main", include_worktree=True)
    assert result.ok, result.failures
    assert [a.path for a in result.added] == [rel]
    assert loads == [f"{data['id']}.json", *sorted([f"{BASELINE}.json", f"{EAGLE}.json"])]


def test_a_duplicate_of_a_record_that_is_not_held_is_still_found(repo: GitRepo, add_record: Callable[..., str]) -> None:
    """Duplicates are found among every record's summary (id and content hash), held whole or not."""
    taken = _elsewhere("20261201T101500Z-eagle3-abc1234")  # new_record's id, of another model: not compared
    taken["model"]["name"] = "another-model"
    repo.write_json(f"records/other-experiment/{taken['id']}.json", taken)
    repo.commit_all("another experiment on main")
    repo.git("branch", "-f", "main", "HEAD")
    rel = add_record()
    result = run_check(repo.root, "main")
    assert result.warnings == []
    assert f"records/other-experiment/{taken['id']}.json" not in result.base_records
    assert [(f.path, f.reason) for f in result.failures] == [
        (rel, f"duplicate id {taken['id']}: also used by records/other-experiment/{taken['id']}.json")
    ]


def test_load_tree_keeps_what_it_is_asked_and_summarises_the_rest(repo: GitRepo) -> None:
    repo.write(f"{EXP}/20261201T000000Z-broken-0000009.json", "{")
    repo.commit_all("a broken file")
    files = files_at(open_repo(repo.root), "HEAD", "records")
    tree = load_tree(files, "records", keep=lambda rel, s: s.variant == "baseline")
    assert set(tree.records) == {f"{EXP}/{BASELINE}.json"}
    assert set(tree.summaries) == {f"{EXP}/{BASELINE}.json", f"{EXP}/{EAGLE}.json"}
    eagle = load_record(SHIPPED / f"{EAGLE}.json").record
    assert tree.summaries[f"{EXP}/{EAGLE}.json"] == Summary.of(eagle)
    assert tree.summaries[f"{EXP}/{EAGLE}.json"].content_hash == content_hash(eagle)
    assert list(tree.errors) == [f"{EXP}/20261201T000000Z-broken-0000009.json"]
    assert str(tree.errors[f"{EXP}/20261201T000000Z-broken-0000009.json"].path) == (
        f"{EXP}/20261201T000000Z-broken-0000009.json"
    )


def test_a_file_is_named_by_the_id_git_gives_its_bytes(repo: GitRepo) -> None:
    """At a commit and in the work tree alike: the same bytes, the same id, as ``git hash-object`` says."""
    repo.write(f"{EXP}/draft.json", '{"not": "committed"}\n')
    at_head = files_at(open_repo(repo.root), "HEAD", "records")
    in_tree = worktree_files(repo.root, "records")
    rel = f"{EXP}/{EAGLE}.json"
    assert at_head[rel].oid == in_tree[rel].oid == blob_id(at_head[rel].read())
    for path in (rel, f"{EXP}/draft.json"):
        said = subprocess.run(["git", "hash-object", path], cwd=repo.root, capture_output=True, text=True, check=True)
        assert in_tree[path].oid == said.stdout.strip()
    assert f"{EXP}/draft.json" not in at_head
