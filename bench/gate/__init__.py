"""The review gate for records that arrive by pull request (``bench check``).

* ``check`` — what a change adds under ``records/``, and why it may not merge (append-only, valid,
  unique, in place).
* ``build_report``, ``render_report_markdown``, ``render_report_json`` — a report on the added records, fit for a
  PR comment (private modules ``_report``, ``_report_markdown``, ``_pairings``, ``_gfm``: comparisons come from
  ``bench.compare``, rendered in the GitHub style ``GFM``; ``escape_gfm`` keeps record strings inert there).

What git says (the base, the diff, the files at a commit) comes from ``bench.git``.
"""

from ._gfm import escape_gfm
from ._report import Report, build_report
from ._report import render_json as render_report_json
from ._report_markdown import GFM
from ._report_markdown import render_markdown as render_report_markdown
from .check import CheckResult, Failure, GateEnvError, run_check

__all__ = [
    "GFM",
    "CheckResult",
    "Failure",
    "GateEnvError",
    "Report",
    "build_report",
    "escape_gfm",
    "render_report_json",
    "render_report_markdown",
    "run_check",
]
