"""The gate on a real temporary git repository: a clean addition and every failure it must catch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from gate_helpers import BASELINE, EAGLE, GitRepo, new_record, shipped

from bench.cli import main
from bench.gate import GateEnvError, escape_gfm, run_check

EXP = "records/eagle-fast-verify"


def reasons(repo: GitRepo, **kw: object) -> dict[str, str]:
    result = run_check(repo.root, "main", **kw)  # type: ignore[arg-type]
    return {f.path: f.reason for f in result.failures}


def test_clean_addition_passes_and_lists_the_record(repo: GitRepo, add_record: Callable[..., str]) -> None:
    rel = add_record()
    result = run_check(repo.root, "main")
    assert result.ok, result.failures
    assert [a.path for a in result.added] == [rel]
    assert result.added[0].record.id == "20261201T101500Z-eagle3-abc1234"
    assert set(result.base_records) == {f"{EXP}/{EAGLE}.json", f"{EXP}/{BASELINE}.json"}


def test_default_base_is_merge_base_with_main(repo: GitRepo, add_record: Callable[..., str]) -> None:
    add_record()
    base_sha = repo.git("rev-parse", "main").strip()
    result = run_check(repo.root)
    assert result.base_sha == base_sha
    assert "main" in result.base_label
    assert len(result.added) == 1


def test_default_base_prefers_origin_main(repo: GitRepo, add_record: Callable[..., str]) -> None:
    first = repo.git("rev-parse", "main").strip()
    add_record()
    # origin/main points at the feature commit: nothing is added relative to it.
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    result = run_check(repo.root)
    assert result.base_sha != first
    assert "origin/main" in result.base_label
    assert result.added == []


def test_modified_record_fails(repo: GitRepo) -> None:
    data = shipped(EAGLE)
    data["levels"][0]["per_request_tok_s"]["value"] = 99.0
    repo.write_json(f"{EXP}/{EAGLE}.json", data)
    repo.commit_all("tweak a figure")
    got = reasons(repo)
    assert "modified" in got[f"{EXP}/{EAGLE}.json"]
    assert "append-only" in got[f"{EXP}/{EAGLE}.json"]


def test_deleted_record_fails(repo: GitRepo) -> None:
    repo.git("rm", "-q", f"{EXP}/{BASELINE}.json")
    repo.commit_all("drop the baseline")
    got = reasons(repo)
    assert got[f"{EXP}/{BASELINE}.json"].startswith("deleted")


def test_renamed_record_fails(repo: GitRepo) -> None:
    repo.git("mv", f"{EXP}/{BASELINE}.json", f"{EXP}/renamed.json")
    repo.commit_all("move it")
    result = run_check(repo.root, "main")
    got = {f.path: f.reason for f in result.failures}
    assert got[f"{EXP}/{BASELINE}.json"].startswith(f"renamed to {EXP}/renamed.json")
    # the new name is judged too: it is not <id>.json
    assert "id" in got[f"{EXP}/renamed.json"]


def test_invalid_record_fails_naming_the_field(repo: GitRepo, add_record: Callable[..., str]) -> None:
    data = new_record()
    data["status"]["state"] = "great"
    rel = add_record(data)
    got = reasons(repo)
    assert "invalid record" in got[rel] and "status.state" in got[rel]


def test_record_that_is_not_json_fails(repo: GitRepo) -> None:
    rel = f"{EXP}/20261201T101500Z-eagle3-abc1234.json"
    (repo.root / rel).write_text('{"schema_version": 1, "id": ', encoding="utf-8")
    repo.commit_all("truncated")
    assert "valid JSON" in reasons(repo)[rel]


def test_duplicate_id_fails(repo: GitRepo, add_record: Callable[..., str]) -> None:
    # Same id as a shipped record, filed under another experiment folder (so the file name is unique).
    data = new_record(record_id=EAGLE)
    data["experiment"] = "copycat"
    rel = add_record(data)
    got = reasons(repo)
    assert f"duplicate id {EAGLE}" in got[rel]
    assert f"{EXP}/{EAGLE}.json" in got[rel]


def test_duplicate_content_fails(repo: GitRepo, add_record: Callable[..., str]) -> None:
    data = shipped(EAGLE)
    data["id"] = "20261205T000000Z-eagle3-0000001"
    data["created_at"] = "2026-12-05T00:00:00Z"
    rel = add_record(data)
    got = reasons(repo)
    assert "duplicate content hash" in got[rel]
    assert f"{EXP}/{EAGLE}.json" in got[rel]
    assert f"{EXP}/{EAGLE}.json" not in got  # the existing record is not blamed


@pytest.mark.parametrize(
    "rel", ["records/20261201T101500Z-eagle3-abc1234.json", "records/a/b/20261201T101500Z-eagle3-abc1234.json"]
)
def test_record_outside_experiment_folder_fails(repo: GitRepo, add_record: Callable[..., str], rel: str) -> None:
    add_record(new_record(), rel=rel)
    assert "outside records/<experiment>/" in reasons(repo)[rel]


def test_record_in_wrong_experiment_folder_fails(repo: GitRepo, add_record: Callable[..., str]) -> None:
    data = new_record()
    rel = add_record(data, rel=f"records/not-its-experiment/{data['id']}.json")
    assert "experiment" in reasons(repo)[rel]


def test_worktree_mode_sees_uncommitted_files(repo: GitRepo) -> None:
    data = new_record()
    repo.write_json(f"{EXP}/{data['id']}.json", data)
    assert run_check(repo.root, "main").added == []
    result = run_check(repo.root, "main", include_worktree=True)
    assert [a.record.id for a in result.added] == [data["id"]]


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(GateEnvError, match="not a git repository"):
        run_check(tmp_path, "main")


def test_missing_base(repo: GitRepo) -> None:
    with pytest.raises(GateEnvError, match="base nosuchbranch not found"):
        run_check(repo.root, "nosuchbranch")


def test_no_main_branch_and_no_base(repo: GitRepo) -> None:
    repo.git("branch", "-q", "-m", "main", "trunk")
    with pytest.raises(GateEnvError, match="not found"):
        run_check(repo.root)


# ------------------------------------------------------------------ CLI: exit codes and messages


def test_cli_exit_codes(
    repo: GitRepo, add_record: Callable[..., str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_record()
    report = tmp_path / "out" / "report.md"
    assert main(["check", "--repo", str(repo.root), "--base", "main", "--report", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert escape_gfm("20261201T101500Z-eagle3-abc1234") in text and "passes" in text

    repo.git("rm", "-q", f"{EXP}/{BASELINE}.json")
    repo.commit_all("delete")
    capsys.readouterr()
    assert main(["check", "--repo", str(repo.root), "--base", "main", "--format", "json"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["ok"] is False
    assert data["failures"][0]["path"] == f"{EXP}/{BASELINE}.json"
    # git pairs the deletion with the similar new record as a rename; either way it is refused
    assert f"FAIL {EXP}/{BASELINE}.json: " in captured.err and "append-only" in captured.err
    assert data["records"][0]["summary"]["id"] == "20261201T101500Z-eagle3-abc1234"

    assert main(["check", "--repo", str(tmp_path / "out")]) == 2
    assert f"not a git repository: {tmp_path / 'out'}" in capsys.readouterr().err
    assert main(["check", "--repo", str(repo.root), "--base", "v9"]) == 2
    assert "base v9 not found" in capsys.readouterr().err


# ------------------------------------------------------------------ the records folder must cover what the change adds


@pytest.mark.parametrize("records_dir", ["recordz", "../../etc", "/etc", "docs", "docs/index.md"])
def test_records_dir_that_misses_the_added_records_is_an_error(
    repo: GitRepo, add_record: Callable[..., str], capsys: pytest.CaptureFixture[str], records_dir: str
) -> None:
    """A typo, a folder outside the repository, or a folder holding no record, on a change that adds JSON files
    under records/: exit 2, naming the folder and the added files it does not cover (never "0 record(s) added")."""
    (repo.root / "docs").mkdir()
    (repo.root / "docs" / "index.md").write_text("# docs\n", encoding="utf-8")
    rel = add_record()
    second = add_record(new_record("20261201T101600Z-eagle3-abc1235", tok_s=90.0))
    capsys.readouterr()
    rc = main(["check", "--repo", str(repo.root), "--base", "main", "--records-dir", records_dir])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"records folder '{records_dir}'" in err
    assert rel in err and second in err
    assert "record(s) added" not in err
    with pytest.raises(GateEnvError, match="records folder"):
        run_check(repo.root, "main", records_dir=records_dir)


def test_records_dir_outside_the_repository_is_an_error_even_without_json(repo: GitRepo) -> None:
    (repo.root / "README.md").write_text("hi\n", encoding="utf-8")
    repo.commit_all("docs only")
    for bad in ("../../etc", "/etc", ".", "records/../.."):
        with pytest.raises(GateEnvError, match="inside the repository"):
            run_check(repo.root, "main", records_dir=bad)


def test_unknown_records_dir_without_added_json_is_fine(repo: GitRepo) -> None:
    (repo.root / "README.md").write_text("hi\n", encoding="utf-8")
    repo.commit_all("docs only")
    result = run_check(repo.root, "main", records_dir="recordz")
    assert result.ok and result.added == []


def test_json_added_outside_a_real_records_folder_is_not_a_record(repo: GitRepo) -> None:
    """The records folder exists and holds records: a JSON file elsewhere (a schema, a fixture) is no concern."""
    (repo.root / "docs").mkdir()
    (repo.root / "docs" / "data.json").write_text("{}\n", encoding="utf-8")
    repo.commit_all("a data file")
    result = run_check(repo.root, "main")
    assert result.ok and result.added == []
    assert result.warnings == ["JSON file(s) added outside records/ are not checked as records: docs/data.json"]


def test_records_dir_given_as_an_absolute_path_inside_the_repository(
    repo: GitRepo, add_record: Callable[..., str]
) -> None:
    rel = add_record()
    result = run_check(repo.root, "main", records_dir=str(repo.root / "records"))
    assert result.ok and result.records_dir == "records"
    assert [a.path for a in result.added] == [rel]


def test_first_record_into_a_new_records_folder(repo: GitRepo) -> None:
    """A records folder that only the change creates is known (it exists at HEAD)."""
    data = new_record()
    data["experiment"] = "fresh"
    repo.write_json(f"results/fresh/{data['id']}.json", data)
    repo.commit_all("first record in a new folder")
    result = run_check(repo.root, "main", records_dir="results")
    assert result.ok, result.failures
    assert [a.path for a in result.added] == [f"results/fresh/{data['id']}.json"]
