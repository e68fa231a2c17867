"""``bench import FORMAT FILE...``: other tools' result files become records (provenance ``imported``).

Every input is parsed before anything is written; a bad file stops the import naming the file, the line
(or JSON position) and the field. Records are written atomically and never overwrite an existing file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from bench.errors import FieldError
from bench.record import RecordError, create_record_file, dump_record, record_path
from bench.record.model import Name

from . import FORMATS, Run, build_records, group_runs, parse_file

__all__ = ["register"]


_NAME: TypeAdapter[str] = TypeAdapter(Name)
NAME_RULE = (
    "a name of lowercase letters, digits, '.', '_' and '-' that starts with a letter or digit, at most 100 "
    "characters, and does not look like a key or token"
)


def check_name(flag: str, field: str, value: str) -> str:
    """A user's ``--experiment``/``--variant`` exactly as given, or a FieldError: never changed silently."""
    try:
        return _NAME.validate_python(value)
    except ValidationError:
        raise FieldError(flag, field, f"{NAME_RULE} (got {json.dumps(value[:80])})") from None


def writable_folder(flag: str, folder: Path) -> Path:
    """``folder`` if it is, or can be made, a folder; else a FieldError naming it (nothing is written)."""
    if folder.exists() and not folder.is_dir():
        raise FieldError(folder, flag, "a folder to write records into (this is a file)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FieldError(folder, flag, f"a folder that can be created ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FieldError(folder, flag, "a folder this user can write to")
    return folder


def _import(args: argparse.Namespace) -> int:
    runs: list[Run] = []
    root = Path(args.records_dir)
    try:
        experiment = check_name("--experiment", "experiment", args.experiment)
        variant = check_name("--variant", "variant", args.variant) if args.variant is not None else None
        if root.exists() and not root.is_dir():
            raise FieldError(root, "--records-dir", "a folder to write records into (this is a file)")
    except FieldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    try:
        for name in args.files:
            path = Path(name)
            if not path.is_file():
                raise RecordError(path, "", "an existing file")
            runs += parse_file(args.format, path)
        records = build_records(group_runs(runs), experiment=experiment, variant=variant)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 1
    if args.dry_run:
        for rec in records:
            print(f"would write {record_path(root, rec)} ({len(rec.levels)} level(s))")
            if args.verbose:
                sys.stdout.write(dump_record(rec))
        return 0
    try:
        writable_folder("--records-dir", root / experiment)
    except FieldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
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
