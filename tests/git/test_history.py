"""Which commit added each record, on a real repository: one ``git log`` for all, uncommitted files marked."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import git
from git_helpers import Repo

from bench.git import UNCOMMITTED, record_commits

EXP = "records/demo"


def test_each_record_maps_to_the_commit_that_added_it(repo: Repo) -> None:
    first = repo.write(f"{EXP}/a.json", {"n": 1})
    base_sha = repo.commit_all("base", date="2026-12-01T09:00:00+00:00")
    second = repo.write(f"{EXP}/b.json", {"n": 2})
    added_sha = repo.commit_all("Add the EAGLE-3 rerun\n\nbody text", date="2026-12-02T08:30:00+00:00")
    # later commits that change another file, or change a record in place, do not change who added it
    repo.write("README.md", "hi\n")
    first.write_text('{"n": 3}\n', encoding="utf-8")
    repo.commit_all("docs", date="2026-12-03T08:30:00+00:00")

    got = record_commits(repo.root / "records")
    assert got is not None and set(got) == {first.resolve(), second.resolve()}
    assert got[first.resolve()].sha == base_sha
    added = got[second.resolve()]
    assert added.sha == added_sha and added.short_sha is not None and added_sha.startswith(added.short_sha)
    assert added.author == "Ada Tester"
    assert added.subject == "Add the EAGLE-3 rerun"
    assert added.date == datetime(2026, 12, 2, 8, 30, tzinfo=UTC)
    assert not added.uncommitted


def test_a_record_deleted_and_added_again_keeps_its_latest_addition(repo: Repo) -> None:
    path = repo.write(f"{EXP}/a.json", {"n": 1})
    repo.commit_all("add")
    path.unlink()
    repo.commit_all("remove")
    repo.write(f"{EXP}/a.json", {"n": 1})
    again = repo.commit_all("add again")
    got = record_commits(repo.root / "records")
    assert got is not None and got[path.resolve()].sha == again


def test_uncommitted_record_is_marked(repo: Repo) -> None:
    repo.write(f"{EXP}/a.json", {"n": 1})
    repo.commit_all("base")
    new = repo.write(f"{EXP}/b.json", {"n": 2})
    got = record_commits(repo.root / "records")
    assert got is not None and got[new.resolve()] is UNCOMMITTED and got[new.resolve()].uncommitted


def test_a_repository_without_commits_has_every_record_uncommitted(repo: Repo) -> None:
    path = repo.write(f"{EXP}/a.json", {"n": 1})
    assert record_commits(repo.root / "records") == {path.resolve(): UNCOMMITTED}


def test_one_git_log_call_for_all_records(repo: Repo) -> None:
    for i in range(3):
        repo.write(f"{EXP}/r{i}.json", {"n": i})
        repo.commit_all(f"add {i}")
    with mock.patch.object(git.Git, "_call_process", autospec=True, side_effect=git.Git._call_process) as spy:
        got = record_commits(repo.root / "records")
    assert got is not None and len(got) == 3 and UNCOMMITTED not in got.values()
    assert [c.args[1] for c in spy.call_args_list].count("log") == 1


def test_not_a_repository_gives_none(tmp_path: Path) -> None:
    (tmp_path / "records" / "x").mkdir(parents=True)
    (tmp_path / "records" / "x" / "a.json").write_text("{}", encoding="utf-8")
    assert record_commits(tmp_path / "records") is None
