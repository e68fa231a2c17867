"""The commit and dirty flag of a work tree, on a real repository (what a record's ``benchbook`` states)."""

from __future__ import annotations

from pathlib import Path

from git_helpers import Repo

from bench.git import CheckoutState, checkout_state


def test_clean_and_dirty(repo: Repo) -> None:
    repo.write("a.txt", "one\n")
    head = repo.commit_all("first")
    assert checkout_state(repo.root, untracked_ignored=("records/",)) == CheckoutState(head, False)

    repo.write("records/new.json", "{}\n")
    assert checkout_state(repo.root, untracked_ignored=("records/",)).dirty is False  # new records are not code
    assert checkout_state(repo.root).dirty is True  # unless they are not set aside

    repo.write("a.txt", "two\n")
    assert checkout_state(repo.root, untracked_ignored=("records/",)) == CheckoutState(head, True)

    repo.git("checkout", "--", "a.txt")
    repo.write("untracked.py", "x = 1\n")
    assert checkout_state(repo.root, untracked_ignored=("records/",)).dirty is True


def test_ignored_files_do_not_make_it_dirty(repo: Repo) -> None:
    repo.write(".gitignore", "build/\n")
    repo.commit_all("ignore")
    repo.write("build/out.bin", "x")
    assert checkout_state(repo.root).dirty is False


def test_a_repository_without_commits(repo: Repo) -> None:
    repo.write("a.txt", "one\n")
    state = checkout_state(repo.root)
    assert state.commit is None and state.dirty is True


def test_outside_git_both_are_unknown(tmp_path: Path, repo: Repo) -> None:
    assert checkout_state(tmp_path / "plain") == CheckoutState(None, None)
    (tmp_path / "plain").mkdir()
    assert checkout_state(tmp_path / "plain") == CheckoutState(None, None)
    (repo.root / "sub").mkdir()
    assert checkout_state(repo.root / "sub") == CheckoutState(None, None)  # exactly there: parents not searched
