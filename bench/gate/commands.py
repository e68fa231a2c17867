"""``bench check``: the review gate for a change's records, and its PR report.

Exit codes: 0 the gate passes; 1 the gate fails (each problem printed as ``PATH: reason``);
2 usage or environment error (not a git repository, base not found).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.atomic_write import write_atomic

from ._report import build_report, render_json
from ._report_markdown import render_markdown
from .check import GateEnvError, run_check

__all__ = ["EXIT_ENV", "EXIT_FAIL", "EXIT_OK", "register"]

EXIT_OK, EXIT_FAIL, EXIT_ENV = 0, 1, 2


def _check(args: argparse.Namespace) -> int:
    try:
        result = run_check(Path(args.repo), args.base, records_dir=args.records_dir, include_worktree=args.worktree)
    except GateEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV
    report = build_report(result)
    text = (
        json.dumps(render_json(report), indent=2, ensure_ascii=False) + "\n"
        if args.format == "json"
        else render_markdown(report, max_chars=args.max_chars)
    )
    if args.report:
        write_atomic(Path(args.report), text)
    else:
        sys.stdout.write(text)
    for failure in result.failures:
        print(f"FAIL {failure}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    summary = f"{len(result.added_files)} record(s) added; {len(result.failures)} problem(s)"
    print(("ok: " if result.ok else "gate failed: ") + summary, file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_FAIL


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="the review gate: records a change adds, append-only/validity/uniqueness checks, PR report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--base", metavar="REF", help="base commit (default: merge-base of HEAD with origin/main, or main)")
    p.add_argument("--repo", metavar="PATH", default=".", help="the repository (default: current folder)")
    p.add_argument("--format", choices=("md", "json"), default="md", help="report format (default: md)")
    p.add_argument("--report", metavar="FILE", help="write the report here instead of standard output")
    p.add_argument("--records-dir", default="records", help="records folder, relative to the repository root")
    p.add_argument("--worktree", action="store_true", help="also check uncommitted and untracked files")
    p.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        help="Markdown report: at most N characters (details are left out first; a PR comment takes 65,536)",
    )
    p.set_defaults(handler=_check)
