"""``bench compare A B`` and ``bench diff A B``: the terminal side of ``bench.compare`` (the only I/O here).

A and B are record ids (looked up in ``--records-dir``, default ``records/``; a unique id prefix is enough) or
paths to record files. ``bench compare`` treats A as the baseline and B as the candidate; unless ``--single``
is given, each side also takes in the other runs of its configuration from the records folder: records
with the same ``run_group``, variant and fingerprint (``bench run --repeat N`` writes N such records). A pair
that differs in context beyond the treatment gets the table and the differing fields but no verdict, unless
``--cross-context`` forces one (labelled so).
Bad ids, paths or settings exit with status 2 and a message naming the file and field.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.record.errors import RecordError
from bench.record.load import LoadResult, load_record, load_records
from bench.record.model import Record
from bench.redact import redact_text, redact_value
from bench.settings import DEFAULT_SETTINGS_FILE, Settings, SettingsError, load_settings

from ._comparison import compare_records
from ._envdiff import environment_diff
from ._json import render_comparison_json, render_diff_json
from ._markdown import render_comparison_markdown, render_diff_markdown
from ._runs import runs_of
from ._terminal import render_comparison_text, render_diff_text

__all__ = ["UsageError", "register", "resolve_record"]

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad id, path or option: printed as ``error: …``, exit status 2."""


class _Records:
    """The records folder, loaded once on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._loaded: LoadResult | None = None

    @property
    def loaded(self) -> LoadResult:
        if self._loaded is None:
            self._loaded = load_records(self.root)
        return self._loaded


def _looks_like_path(ref: str) -> bool:
    return ref.endswith(".json") or "/" in ref or Path(ref).is_file()


def resolve_record(ref: str, records: _Records) -> Record:
    """A record from a path or an id (exact, else a unique prefix) in the records folder."""
    if _looks_like_path(ref):
        path = Path(ref)
        if not path.is_file():
            raise UsageError(f"{ref}: no such record file")
        try:
            return load_record(path, check_layout=False).record
        except RecordError as exc:
            raise UsageError(str(exc)) from None
    if not records.root.is_dir():
        raise UsageError(f"{ref}: not a file, and the records folder {records.root} does not exist (--records-dir)")
    by_id = records.loaded.by_id
    if ref in by_id:
        return by_id[ref].record
    matches = sorted(i for i in by_id if i.startswith(ref))
    if len(matches) == 1:
        return by_id[matches[0]].record
    if len(matches) > 1:
        raise UsageError(f"{ref}: ambiguous id prefix, matches {', '.join(matches)}")
    bad = len(records.loaded.errors)
    extra = f"; {bad} file(s) there failed to load (run `bench validate {records.root}`)" if bad else ""
    raise UsageError(f"{ref}: no record with this id in {records.root} ({len(by_id)} record(s) loaded{extra})")


def _runs_of(record: Record, records: _Records) -> list[Record]:
    """The record and the other runs of its configuration (same run_group, variant and fingerprint)."""
    if record.run_group is None or not records.root.is_dir():
        return [record]
    return runs_of(record, (lr.record for lr in records.loaded.records))


def _settings(arg: str | None) -> Settings:
    if arg is None:
        return load_settings()
    path = Path(arg)
    if not path.is_file():
        raise UsageError(f"{arg}: no such settings file")
    return load_settings(path)


def _emit(text: str) -> None:
    """The one way compare/diff write to the terminal: a secret a record holds is hidden first."""
    text = redact_text(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _run(fn: Any, args: argparse.Namespace) -> int:
    try:
        fn(args)
    except (UsageError, SettingsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _compare(args: argparse.Namespace) -> None:
    if args.n_boot < 1:
        raise UsageError(f"--n-boot must be at least 1, got {args.n_boot}")
    settings = _settings(args.settings)
    records = _Records(Path(args.records_dir))
    a = resolve_record(args.a, records)
    b = resolve_record(args.b, records)
    side_a = [a] if args.single else _runs_of(a, records)
    side_b = [b] if args.single else _runs_of(b, records)
    if {r.id for r in side_a} & {r.id for r in side_b}:
        raise UsageError(f"{args.a} and {args.b} are runs of one configuration; compare two configurations")
    c = compare_records(
        side_a,
        side_b,
        settings=settings,
        n_boot=args.n_boot,
        seed=args.seed,
        cross_context=True if args.cross_context else None,
    )
    if args.format == "json":
        _emit(json.dumps(redact_value("", render_comparison_json(c)), indent=2, ensure_ascii=False))
    elif args.format == "md":
        _emit(render_comparison_markdown(c))
    else:
        _emit(render_comparison_text(c))


def _diff(args: argparse.Namespace) -> None:
    records = _Records(Path(args.records_dir))
    a = resolve_record(args.a, records)
    b = resolve_record(args.b, records)
    # values are redacted before a table cuts them (a cut secret would no longer be recognised)
    rows = [replace(d, a=redact_value(d.field, d.a), b=redact_value(d.field, d.b)) for d in environment_diff(a, b)]
    if args.format == "json":
        _emit(json.dumps({"a": a.id, "b": b.id, "diff": render_diff_json(rows)}, indent=2, ensure_ascii=False))
    elif args.format == "md":
        _emit(render_diff_markdown(rows, a.id, b.id))
    else:
        _emit(render_diff_text(rows, a.id, b.id))


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="baseline: a record id (or unique prefix) or a record file")
    p.add_argument("b", metavar="B", help="candidate: a record id (or unique prefix) or a record file")
    p.add_argument("--records-dir", default="records", help="where ids are looked up (default: records)")
    p.add_argument("--format", choices=("text", "json", "md"), default="text", help="output format (default: text)")


def register(sub: Any) -> None:
    c = sub.add_parser("compare", help="compare two records (or run groups): ratios, intervals, warnings, verdict")
    _common(c)
    c.add_argument("--settings", default=None, help=f"settings file (default: {DEFAULT_SETTINGS_FILE} if present)")
    c.add_argument("--single", action="store_true", help="use only the named records, not their run group")
    c.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default: 2000)")
    c.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    c.add_argument(
        "--cross-context",
        action="store_true",
        help="give a verdict even when the records differ in context beyond the treatment (labelled cross-context)",
    )
    c.set_defaults(handler=lambda args: _run(_compare, args))
    d = sub.add_parser("diff", help="every field in which two records differ (levels, ids and timestamps aside)")
    _common(d)
    d.set_defaults(handler=lambda args: _run(_diff, args))
