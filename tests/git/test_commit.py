"""Committing records on a branch in a real repository, while the user's checkout stays exactly as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from git_helpers import GIT_ENV, Repo

import bench.git._commit as commit_module
from bench.git import CommitError, commit_files


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit's author and committer come from the environment, as in a collector job; no user config."""
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def _files(tmp_path: Path, n: int, start: int = 0) -> dict[str, Path]:
    out = {}
    for i in range(start, start + n):
        src = tmp_path / "results" / f"r{i}.json"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(f'{{"n": {i}}}\n', encoding="utf-8")
        out[f"records/camp/2026120{i}T000000Z-x-abcdef{i}.json"] = src
    return out


def _blob(repo: Repo, rev: str, path: str) -> bytes:
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo.root, capture_output=True, check=True).stdout


def test_commits_on_a_new_branch_without_touching_head_index_or_files(user_repo: Repo, tmp_path: Path) -> None:
    before = user_repo.state()
    main_tip = user_repo.git("rev-parse", "main").strip()
    assert before["head_sha"] != main_tip  # the user is on their own branch, ahead of main
    files = _files(tmp_path, 3)
    result = commit_files(user_repo.root, "campaign/x", files, "campaign x: 3 records")
    assert user_repo.state() == before  # HEAD, .git/index bytes, staged changes and every file unchanged
    assert result.commit == user_repo.git("rev-parse", "campaign/x").strip()
    assert result.parent == main_tip and user_repo.git("rev-parse", "campaign/x^").strip() == main_tip
    changed = user_repo.git("diff", "--name-status", main_tip, "campaign/x").splitlines()
    assert sorted(changed) == sorted(f"A\t{p}" for p in files)  # main plus the records, nothing of the user's
    for path, src in files.items():
        assert _blob(user_repo, "campaign/x", path) == src.read_bytes()
    assert user_repo.git("log", "-1", "--format=%s|%an", "campaign/x").strip() == "campaign x: 3 records|Ada Tester"


def test_an_explicit_base_is_where_a_new_branch_starts(user_repo: Repo, tmp_path: Path) -> None:
    result = commit_files(user_repo.root, "campaign/y", _files(tmp_path, 1), "m", base="HEAD")
    assert result.parent == user_repo.git("rev-parse", "work").strip()


def test_a_second_collection_adds_only_new_records(user_repo: Repo, tmp_path: Path) -> None:
    files = _files(tmp_path, 2)
    first = commit_files(user_repo.root, "campaign/x", files, "first")
    again = commit_files(user_repo.root, "campaign/x", files, "again")
    assert again.commit is None and sorted(again.unchanged) == sorted(files)
    assert user_repo.git("rev-parse", "campaign/x").strip() == first.commit
    more = {**files, **_files(tmp_path, 1, start=5)}
    third = commit_files(user_repo.root, "campaign/x", more, "third")
    assert third.parent == first.commit and len(third.added) == 1 and len(third.unchanged) == 2


def test_refuses_a_branch_checked_out_in_any_worktree(user_repo: Repo, tmp_path: Path) -> None:
    before = user_repo.state()
    with pytest.raises(CommitError, match="checked out"):
        commit_files(user_repo.root, "work", _files(tmp_path, 1), "m")
    user_repo.git("worktree", "add", "-q", str(tmp_path / "other"), "-b", "elsewhere", "main")
    with pytest.raises(CommitError, match="checked out"):
        commit_files(user_repo.root, "elsewhere", _files(tmp_path, 1), "m")
    assert user_repo.state() == before


def test_refuses_to_change_a_record_already_on_the_branch(user_repo: Repo, tmp_path: Path) -> None:
    files = _files(tmp_path, 1)
    first = commit_files(user_repo.root, "campaign/x", files, "first")
    next(iter(files.values())).write_text('{"n": "changed"}\n', encoding="utf-8")
    with pytest.raises(CommitError, match="append-only"):
        commit_files(user_repo.root, "campaign/x", files, "second")
    assert user_repo.git("rev-parse", "campaign/x").strip() == first.commit


def test_a_branch_moved_meanwhile_is_not_overwritten(
    user_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_files(user_repo.root, "campaign/x", _files(tmp_path, 1), "first")
    real = commit_module._write_blobs

    def racing(*args: object, **kwargs: object) -> list[str]:  # someone else moves the branch mid-commit
        user_repo.git("branch", "-f", "campaign/x", "main")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(commit_module, "_write_blobs", racing)
    with pytest.raises(CommitError, match="moved"):
        commit_files(user_repo.root, "campaign/x", _files(tmp_path, 1, start=3), "second")
    assert user_repo.git("rev-parse", "campaign/x").strip() == user_repo.git("rev-parse", "main").strip()


def test_bad_branch_names_and_folders_are_refused(user_repo: Repo, tmp_path: Path) -> None:
    with pytest.raises(CommitError, match="not a valid branch name"):
        commit_files(user_repo.root, "bad..name", _files(tmp_path, 1), "m")
    (tmp_path / "plain").mkdir()
    with pytest.raises(CommitError, match="not a git repository"):
        commit_files(tmp_path / "plain", "x", _files(tmp_path, 1), "m")
