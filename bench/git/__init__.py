"""Everything benchbook asks git, through gitpython, in one place.

* the PR gate: :func:`open_repo`, :func:`resolve_base` (the base of a change), :func:`diff_changes` (what it
  does to the tree), :func:`files_at` (a folder's files at a commit, each read when asked: :class:`TreeFile`);
* the site: :func:`record_commits`, which commit added each record (one ``git log`` for all of them);
* the harness: :func:`checkout_state`, the commit and dirty flag of the measured checkout;
* ``bench collect``: :func:`commit_files`, records committed on a branch without touching the user's checkout.

Importing this package needs a ``git`` executable (gitpython raises ``ImportError`` without one).
"""

from ._changes import Change, ChangeKind, diff_changes, parse_name_status
from ._checkout import CheckoutState, checkout_state
from ._commit import DEFAULT_BASES, CommitError, CommitResult, commit_files
from ._history import UNCOMMITTED, RecordCommit, parse_added_log, record_commits
from ._repo import DEFAULT_BRANCHES, RepositoryError, commit_of, open_repo, resolve_base
from ._tree import TreeFile, blob_id, files_at

__all__ = [
    "DEFAULT_BASES",
    "DEFAULT_BRANCHES",
    "UNCOMMITTED",
    "Change",
    "ChangeKind",
    "CheckoutState",
    "CommitError",
    "CommitResult",
    "RecordCommit",
    "RepositoryError",
    "TreeFile",
    "blob_id",
    "checkout_state",
    "commit_files",
    "commit_of",
    "diff_changes",
    "files_at",
    "open_repo",
    "parse_added_log",
    "parse_name_status",
    "record_commits",
    "resolve_base",
]
