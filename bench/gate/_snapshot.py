"""The records tree at one commit (or in the work tree), loaded with ``bench.record.load_record``.

Files are materialised into a temporary folder so that exactly the loader the site uses judges them;
errors are re-addressed to the repository-relative path.

A tree is read one file at a time and only what the gate asks of every record is kept (:class:`Summary`: its id,
content hash, experiment, variant and fingerprint); the whole record only where ``keep`` asks for it (the records a
change adds, and the base's records it is compared with). A file at the same path with the same bytes (its git
object id) is loaded once for both trees (``loaded``): a change adding one record to 1,000 held about 1 GB of
records and their bytes twice over, and loaded each twice.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench.compare import fingerprint
from bench.git import TreeFile, blob_id
from bench.record import Record, RecordError, load_record

__all__ = ["Loaded", "LoadedTree", "Summary", "content_hash", "is_record_path", "load_tree", "worktree_files"]


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


def worktree_files(root: Path, records_dir: str) -> dict[str, TreeFile]:
    """Every file under ``records_dir`` in the work tree, as :func:`bench.git.files_at` gives a commit's."""
    base = root / records_dir
    if not base.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): TreeFile(blob_id(p.read_bytes()), p.read_bytes)
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class Summary:
    """What the gate asks of every record of a tree: duplicates (id, content hash) and which records a change is
    compared with (experiment, variant, fingerprint)."""

    id: str
    content_hash: str
    experiment: str
    variant: str
    fingerprint: str

    @classmethod
    def of(cls, record: Record) -> Summary:
        return cls(record.id, content_hash(record), record.experiment, record.variant, fingerprint(record))


Loaded = dict[tuple[str, str], Summary | RecordError]
"""What a file gave, by its path and git object id (the same bytes at the same path: the same record or error)."""


@dataclass
class LoadedTree:
    records: dict[str, Record] = field(default_factory=dict)  # rel path -> record, where ``keep`` asked for it
    summaries: dict[str, Summary] = field(default_factory=dict)  # rel path -> every record that loads
    errors: dict[str, RecordError] = field(default_factory=dict)  # rel path -> error (path re-addressed)


def load_tree(
    files: dict[str, TreeFile],
    records_dir: str,
    keep: Callable[[str, Summary], bool] = lambda rel, summary: True,
    loaded: Loaded | None = None,
) -> LoadedTree:
    """Load every ``records/<experiment>/*.json`` among ``files``, one at a time (other files are ignored here);
    each record's :class:`Summary`, and the record itself where ``keep(path, summary)``. A file ``loaded`` holds
    (from another tree) is not loaded again unless its record is kept."""
    out = LoadedTree()
    done: Loaded = {} if loaded is None else loaded
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        for rel, f in sorted(files.items()):
            if not is_record_path(rel, records_dir):
                continue
            found = done.get((rel, f.oid))
            record: Record | None = None
            if found is None or (isinstance(found, Summary) and keep(rel, found)):
                try:
                    record = _load(rel, f, tmp)
                    found = found or Summary.of(record)
                except RecordError as exc:
                    found = RecordError(rel, exc.field if exc.field != "(whole file)" else "", exc.expected)
                done[(rel, f.oid)] = found
            if isinstance(found, RecordError):
                out.errors[rel] = found
                continue
            out.summaries[rel] = found
            if keep(rel, found):
                assert record is not None  # loaded above: a kept record is always loaded whole
                out.records[rel] = record
    return out


def _load(rel: str, f: TreeFile, tmp: str) -> Record:
    """The record in ``f``, judged at ``rel`` under the folder ``tmp``."""
    path = Path(tmp) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(f.read())
    try:
        return load_record(path).record
    finally:
        path.unlink()
