"""The review gate for records that arrive by pull request, and git provenance for the site.

* ``check`` — what a change adds under ``records/``, and why it may not merge (append-only, valid,
  unique, in place).
* ``report`` — a Markdown / JSON report on the added records, fit for a PR comment.
* ``provenance`` — which commit added each record (one pass over git history).
"""

from .check import CheckResult, Failure, run_check
from .gitrepo import GateEnvError
from .provenance import UNCOMMITTED, RecordCommit, git_provenance, last_changed, repository_url

__all__ = [
    "UNCOMMITTED",
    "CheckResult",
    "Failure",
    "GateEnvError",
    "RecordCommit",
    "git_provenance",
    "last_changed",
    "repository_url",
    "run_check",
]
