"""``scripts/pr_check.sh`` end to end on a temporary git repository holding a copy of the project's site files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gate_helpers import BASELINE, PROJECT, GitRepo, new_record

from bench.gate import escape_gfm

EXP = "records/eagle-fast-verify"


@pytest.fixture
def site_repo(tmp_path: Path) -> GitRepo:
    root = tmp_path / "proj"
    root.mkdir()
    for name in ("mkdocs.yml", "benchbook.yaml"):
        shutil.copy(PROJECT / name, root / name)
    for name in ("docs", "hooks", "records"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scripts").mkdir()
    shutil.copy(PROJECT / "scripts" / "pr_check.sh", root / "scripts" / "pr_check.sh")
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit_all("base")
    repo.git("checkout", "-q", "-b", "pr")
    return repo


def run_pr_check(repo: GitRepo, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHBOOK_PY": sys.executable, "PR_CHECK_OUT": str(out), "PR_CHECK_COMMITTED_ONLY": "1"}
    return subprocess.run(
        ["bash", str(repo.root / "scripts" / "pr_check.sh"), *args],
        cwd=repo.root, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def test_pr_check_passes_on_a_clean_addition_and_fails_on_a_deletion(site_repo: GitRepo, tmp_path: Path) -> None:
    data = new_record()
    site_repo.write_json(f"{EXP}/{data['id']}.json", data)
    site_repo.commit_all("add a record")
    done = run_pr_check(site_repo, tmp_path / "ok", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "ok" / "report.md").read_text(encoding="utf-8")
    assert escape_gfm(data["id"]) in report and "passes" in report
    assert (tmp_path / "ok" / "report.json").is_file()
    assert (tmp_path / "ok" / "site" / "index.html").is_file()

    site_repo.git("rm", "-q", f"{EXP}/{BASELINE}.json")
    site_repo.commit_all("delete a record")
    done = run_pr_check(site_repo, tmp_path / "bad", "main")
    assert done.returncode == 1
    assert f"FAIL {EXP}/{BASELINE}.json: deleted" in done.stderr


def test_pr_check_missing_base_exits_2(site_repo: GitRepo, tmp_path: Path) -> None:
    done = run_pr_check(site_repo, tmp_path / "out", "no-such-base")
    assert done.returncode == 2
    assert "base no-such-base not found" in done.stderr


def test_pr_check_builds_no_site_preview_from_a_record_holding_a_secret(site_repo: GitRepo, tmp_path: Path) -> None:
    """The preview site is uploaded as an artifact: a record the gate refuses for a secret is never rendered."""
    data = new_record()
    data["description"] = "served with key sk-proj-abcdefghijklmnop0123"
    site_repo.write_json(f"{EXP}/{data['id']}.json", data)
    site_repo.commit_all("add a record with a key")
    out = tmp_path / "out"
    done = run_pr_check(site_repo, out, "main")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "holds what looks like a secret" in done.stderr and "description" in done.stderr
    assert "no site preview is built" in done.stdout
    assert not (out / "site").exists()
    for path in out.rglob("*"):
        if path.is_file():
            assert "sk-proj-abcdefghijklmnop0123" not in path.read_text(encoding="utf-8", errors="replace")
    assert "sk-proj-abcdefghijklmnop0123" not in done.stdout + done.stderr
