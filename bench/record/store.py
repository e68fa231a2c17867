"""Writing records: ids, file names and atomic writes. Nothing is ever half-written."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path

from bench.atomic_write import write_atomic
from bench.redact import redact_value

from .model import Record

__all__ = ["create_record_file", "dump_record", "new_record_id", "record_path", "replace_record_file"]


def new_record_id(variant: str, created_at: datetime, salt: str = "") -> str:
    """``<UTC time>-<variant>-<short hash>``; the hash mixes in randomness so two runs never collide."""
    stamp = created_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    digest = hashlib.sha256(f"{stamp}|{variant}|{salt}|{secrets.token_hex(8)}".encode()).hexdigest()[:7]
    return f"{stamp}-{variant}-{digest}"


def record_path(root: Path, record: Record) -> Path:
    return root / record.experiment / f"{record.id}.json"


# Fields that name the record's file: redaction must never change them (the model refuses secret-looking names).
_NAMING_FIELDS = ("id", "experiment", "variant")


def dump_record(record: Record) -> str:
    """The record's JSON text, every value passed through :func:`bench.redact.redact_value` first.

    This is the one place a record is serialised (new files, updates after each level, ``bench import``), so no
    path can write a secret, whatever a server, a config or a log handed to the record. Ordinary values (digests,
    ids, formulas, paths) pass unchanged."""
    data = record.model_dump(mode="json", exclude_none=True)
    clean = redact_value("", data)
    for name in _NAMING_FIELDS:
        if clean.get(name) != data.get(name):
            raise ValueError(f"record field '{name}' looks like a secret: refusing to write it")
    return json.dumps(clean, indent=2, ensure_ascii=False) + "\n"


def create_record_file(root: Path, record: Record) -> Path:
    """Write a new record; refuse (FileExistsError) if the file already exists."""
    path = record_path(root, record)
    write_atomic(path, dump_record(record), exclusive=True)
    return path


def replace_record_file(path: Path, record: Record) -> None:
    """Atomically replace a record this run created (used to update a sweep after each level)."""
    write_atomic(path, dump_record(record))
