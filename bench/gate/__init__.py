"""The review gate for records that arrive by pull request (``bench check``).

* ``check`` — what a change adds under ``records/``, and why it may not merge (append-only, valid,
  unique, in place).
* ``report`` — a Markdown / JSON report on the added records, fit for a PR comment.

What git says (the base, the diff, the files at a commit) comes from ``bench.git``.
"""

from .check import CheckResult, Failure, GateEnvError, run_check

__all__ = ["CheckResult", "Failure", "GateEnvError", "run_check"]
