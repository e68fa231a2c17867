"""git provenance on a real temporary repository: one log pass, added-by commits, uncommitted files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import git
from gate_helpers import BASELINE, EAGLE, GitRepo, new_record

from bench.gate import UNCOMMITTED, git_provenance, last_changed, repository_url

EXP = "records/eagle-fast-verify"


def test_each_record_maps_to_the_commit_that_added_it(repo: GitRepo) -> None:
    base_sha = repo.git("rev-parse", "HEAD").strip()
    data = new_record()
    rel = f"{EXP}/{data['id']}.json"
    repo.write_json(rel, data)
    added_sha = repo.commit_all("Add the EAGLE-3 rerun\n\nbody text", date="2026-12-02T08:30:00+00:00")
    # a later commit that only touches another file does not change who added the record
    (repo.root / "README.md").write_text("hi\n", encoding="utf-8")
    repo.commit_all("docs", date="2026-12-03T08:30:00+00:00")

    prov = git_provenance(repo.root, Path("records"))
    assert set(prov) == {f"{EXP}/{EAGLE}.json", f"{EXP}/{BASELINE}.json", rel}
    assert prov[f"{EXP}/{EAGLE}.json"].sha == base_sha
    got = prov[rel]
    assert got.sha == added_sha and got.short_sha is not None and added_sha.startswith(got.short_sha)
    assert got.author == "Ada Tester"
    assert got.subject == "Add the EAGLE-3 rerun"
    assert got.date == datetime(2026, 12, 2, 8, 30, tzinfo=UTC)
    assert not got.uncommitted


def test_uncommitted_record_is_marked(repo: GitRepo) -> None:
    data = new_record()
    rel = f"{EXP}/{data['id']}.json"
    repo.write_json(rel, data)
    prov = git_provenance(repo.root, repo.root / "records")
    assert prov[rel] is UNCOMMITTED and prov[rel].uncommitted


def test_one_git_log_call_for_all_records(repo: GitRepo) -> None:
    for i in range(3):
        data = new_record(record_id=f"20261201T10150{i}Z-eagle3-abc123{i}", tok_s=80.0 + i)
        repo.write_json(f"{EXP}/{data['id']}.json", data)
        repo.commit_all(f"add {i}")
    with mock.patch.object(git.Git, "_call_process", autospec=True, side_effect=git.Git._call_process) as spy:
        prov = git_provenance(repo.root, Path("records"))
    assert len(prov) == 5
    assert [c.args[1] for c in spy.call_args_list].count("log") == 1


def test_not_a_repository_gives_empty(tmp_path: Path) -> None:
    (tmp_path / "records" / "x").mkdir(parents=True)
    (tmp_path / "records" / "x" / "a.json").write_text("{}", encoding="utf-8")
    assert git_provenance(tmp_path, Path("records")) == {}
    assert last_changed(tmp_path, [Path("records")]) is None


def test_last_changed(repo: GitRepo) -> None:
    assert last_changed(repo.root, [Path("records")]) == datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    data = new_record()
    repo.write_json(f"{EXP}/{data['id']}.json", data)
    repo.commit_all("add", date="2026-12-04T12:00:00+00:00")
    assert last_changed(repo.root, [repo.root / EXP]) == datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    assert last_changed(repo.root, [Path("nothing-here")]) is None


def test_repository_url_is_optional(tmp_path: Path) -> None:
    assert repository_url(tmp_path) is None
    (tmp_path / "benchbook.yaml").write_text("experiments: {}\n", encoding="utf-8")
    assert repository_url(tmp_path) is None
    (tmp_path / "benchbook.yaml").write_text("repository_url: https://github.com/o/benchbook/\n", encoding="utf-8")
    assert repository_url(tmp_path) == "https://github.com/o/benchbook"
    (tmp_path / "benchbook.yaml").write_text(": : bad yaml [", encoding="utf-8")
    assert repository_url(tmp_path) is None
