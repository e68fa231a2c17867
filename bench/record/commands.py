"""``bench validate`` and ``bench schema``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import RecordError
from .load import iter_records, load_record
from .model import SCHEMA_VERSION, Record

__all__ = ["SCHEMA_FILE", "json_schema", "register"]

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema" / f"record-v{SCHEMA_VERSION}.schema.json"


def json_schema() -> str:
    schema: dict[str, Any] = Record.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"benchbook/record-v{SCHEMA_VERSION}.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _validate(args: argparse.Namespace) -> int:
    errors: list[RecordError] = []
    count = 0
    for target in args.paths:
        path = Path(target)
        if path.is_dir():  # one record at a time: a folder of 10,000 is not held
            for found in iter_records(path):
                if isinstance(found, RecordError):
                    errors.append(found)
                else:
                    count += 1
        else:
            try:
                load_record(path)
                count += 1
            except RecordError as exc:
                errors.append(exc)
    for err in errors:
        print(f"error: {err}", file=sys.stderr)
    print(f"{count} valid record(s), {len(errors)} error(s)")
    return 1 if errors else 0


def _schema(args: argparse.Namespace) -> int:
    text = json_schema()
    if args.check:
        current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else ""
        if current != text:
            print(f"error: {SCHEMA_FILE} is out of date; run `bench schema --write`", file=sys.stderr)
            return 1
        return 0
    if args.write:
        SCHEMA_FILE.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        print(SCHEMA_FILE)
        return 0
    sys.stdout.write(text)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("validate", help="validate record files or folders")
    p.add_argument("paths", nargs="+", help="record files or the records/ folder")
    p.set_defaults(handler=_validate)
    s = sub.add_parser("schema", help="print, write or check the committed JSON Schema")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help=f"write {SCHEMA_FILE.name}")
    g.add_argument("--check", action="store_true", help="fail if the committed schema is out of date")
    s.set_defaults(handler=_schema)
