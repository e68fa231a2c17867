"""``bench import FORMAT FILE...``: other tools' result files become records (provenance ``imported``).

Every input is parsed before anything is written; a bad file stops the import naming the file, the line
(or JSON position) and the field. Records are written atomically and never overwrite an existing file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bench.record import RecordError, create_record_file, dump_record, record_path

from .base import Run, build_records, group_runs
from .formats import FORMATS, parse_file

__all__ = ["register"]


def _import(args: argparse.Namespace) -> int:
    runs: list[Run] = []
    try:
        for name in args.files:
            path = Path(name)
            if not path.is_file():
                raise RecordError(path, "", "an existing file")
            runs += parse_file(args.format, path)
        records = build_records(group_runs(runs), experiment=args.experiment, variant=args.variant)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 1
    except ValueError as exc:  # e.g. pydantic rejecting an --experiment/--variant that is not a slug
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    root = Path(args.records_dir)
    if args.dry_run:
        for rec in records:
            print(f"would write {record_path(root, rec)} ({len(rec.levels)} level(s))")
            if args.verbose:
                sys.stdout.write(dump_record(rec))
        return 0
    for rec in records:
        print(create_record_file(root, rec))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import",
        help="turn SGLang / vLLM / guidellm result files into records",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("format", choices=sorted(FORMATS), help="the tool that wrote the files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--experiment", default="imported", help="experiment folder (default: imported)")
    p.add_argument("--variant", help="variant name (default: the engine, else the tool)")
    p.add_argument("--records-dir", default="records", help="where records go (default: records)")
    p.add_argument("--dry-run", action="store_true", help="parse and show what would be written; write nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="with --dry-run, print the records")
    p.set_defaults(handler=_import)
