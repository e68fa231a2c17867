"""The records tree at one commit (or in the work tree), loaded with ``bench.record.load_record``.

Files are materialised into a temporary folder so that exactly the loader the site uses judges them;
errors are re-addressed to the repository-relative path.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench.record import Record, RecordError, load_record

__all__ = ["LoadedTree", "content_hash", "is_record_path", "load_tree", "worktree_files"]


def content_hash(record: Record) -> str:
    """sha256 of the record's content apart from its ``id`` and ``created_at``: the same run filed twice."""
    data = record.model_dump(mode="json", exclude={"id", "created_at"}, exclude_none=True)
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def is_record_path(rel: str, records_dir: str) -> bool:
    """``records/<experiment>/<name>.json`` exactly."""
    parts = PurePosixPath(rel).parts
    prefix = PurePosixPath(records_dir).parts
    return (
        len(parts) == len(prefix) + 2
        and tuple(parts[: len(prefix)]) == prefix
        and parts[-1].endswith(".json")
        and not parts[-1].startswith(".")
    )


def worktree_files(root: Path, records_dir: str) -> dict[str, bytes]:
    base = root / records_dir
    if not base.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


@dataclass
class LoadedTree:
    records: dict[str, Record] = field(default_factory=dict)  # rel path -> record
    errors: dict[str, RecordError] = field(default_factory=dict)  # rel path -> error (path re-addressed)


def load_tree(files: dict[str, bytes], records_dir: str) -> LoadedTree:
    """Load every ``records/<experiment>/*.json`` among ``files``; other files are ignored here."""
    out = LoadedTree()
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        for rel, data in sorted(files.items()):
            if not is_record_path(rel, records_dir):
                continue
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            try:
                out.records[rel] = load_record(path).record
            except RecordError as exc:
                out.errors[rel] = RecordError(rel, exc.field if exc.field != "(whole file)" else "", exc.expected)
    return out
