"""Loading the site: its records (read, validated and redacted once: :func:`redacted_record`), load errors named
relative to the repository, dead ends, git provenance and the Reliability page's cases, into one
:class:`~bench.site._site_data.SiteData`."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from bench.json_indent import dumps_indent2
from bench.record.errors import RecordError
from bench.record.load import LoadedRecord
from bench.record.model import Record
from bench.redact import redact_tree
from bench.settings import Settings

from ._cache import SiteCache
from ._dead_ends import DeadEndError, load_dead_ends
from ._git_info import GitInfo, load_git_info
from ._reliability import load_reliability
from ._site_data import RECORDS_ENV, SiteData
from ._site_records import load_site_records

__all__ = ["load_site", "records_dir", "redacted_record"]


def records_dir(default: Path) -> Path:
    """The records folder: ``$BENCHBOOK_RECORDS_DIR`` if set, else ``default`` (the repo's ``records/``)."""
    env = os.environ.get(RECORDS_ENV)
    return Path(env).expanduser().resolve() if env else default


def _shown_path(path: Path | str, bases: Sequence[Path]) -> str:
    """A file as the site shows it: relative to the first of ``bases`` (the repository, then the records folder's
    parent) that holds it, else its name alone; never an absolute local path."""
    p = Path(path)
    for base in bases:
        try:
            return p.resolve().relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return p.name if p.is_absolute() else p.as_posix()


def _relative_error(err: RecordError | DeadEndError, bases: Sequence[Path]) -> RecordError | DeadEndError:
    expected = err.expected
    for base in bases:  # an error may name a second file ("also used by ...")
        expected = expected.replace(str(base.resolve()) + os.sep, "")
    return type(err)(_shown_path(err.path, bases), err.field, expected)


def redacted_record(loaded: LoadedRecord) -> LoadedRecord:
    """The record as the site shows it: every value through :func:`bench.redact.redact_value` (the page, the
    downloadable JSON and the CSV all come from this), unchanged when it holds no secret. Raises RecordError when
    hiding a secret breaks the record (a secret in a field the schema constrains)."""
    data = loaded.record.model_dump(mode="json", exclude_none=True)
    clean = redact_tree(data)  # redact_value("", data), faster
    if clean == data:
        return loaded
    try:
        record = Record.model_validate(clean)
    except ValidationError as exc:
        field_name = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "(whole file)"
        raise RecordError(
            loaded.path, field_name, "a value that is not a key or token (the record is not shown)"
        ) from None
    # json.dumps(redact_value("", json.loads(raw)), indent=2, ensure_ascii=False), faster, the same bytes
    raw = dumps_indent2(redact_tree(json.loads(loaded.raw))) + "\n"
    return replace(loaded, record=record, raw=raw)


def load_site(
    records: Path,
    docs_dir: Path | None = None,
    *,
    settings: Settings | None = None,
    git: bool = False,
    repository: Path | None = None,
    cache: SiteCache | None = None,
    workers: int = 1,
) -> SiteData:
    """Load records (bad files become errors, good ones still load) and, with a docs folder, dead ends.

    ``settings``: the parsed benchbook.yaml (default: the built-in defaults). ``git``: also read, in one pass,
    which commit added each record (empty outside a git repository). Every record is redacted
    (:func:`redacted_record`); errors name files relative to ``repository`` (else to the records folder's parent),
    and the Reliability page's cases are read from the repository's test suite. ``cache``: keep each record's
    loading, redaction and rows for the next build (:mod:`bench.site._cache`); with one, ``workers`` > 1 reads the
    records it lacks in that many processes (``bench.site.build_workers``).
    """
    settings = settings or Settings()
    loaded = load_site_records(records, redacted_record, settings.comparison.confidence, cache, workers=workers)
    result = loaded.result
    errors: list[RecordError | DeadEndError] = list(result.errors)
    dead_ends, de_errors = load_dead_ends(docs_dir) if docs_dir is not None else ([], [])
    errors += de_errors
    bases = [*((repository,) if repository is not None else ()), records.resolve().parent]
    info = (
        load_git_info(result.records, records, settings.commit_url_base)
        if git
        else GitInfo(repository_url=settings.commit_url_base)
    )
    return SiteData(
        records=tuple(result.records),
        errors=tuple(_relative_error(e, bases) for e in errors),
        dead_ends=tuple(dead_ends),
        settings=settings,
        git=info,
        reliability=load_reliability(repository) if repository is not None else (),
        docs_dir=docs_dir,
        cache=cache,
        record_rows=loaded.rows,
        record_texts=loaded.texts,
    )
