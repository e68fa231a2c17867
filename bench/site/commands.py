"""``bench render OUT_DIR`` and ``bench check-offline SITE_DIR``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bench.errors import FieldError
from bench.settings import DEFAULT_SETTINGS_FILE, SettingsError, load_settings

from ._offline import check_site
from ._site_data import RECORDS_ENV
from ._site_load import load_site, records_dir
from ._workers import WorkersError, build_workers
from ._write_pages import write_pages

__all__ = ["register"]


def _output_folder(out: Path) -> Path:
    """The output folder, created if missing; a FieldError (nothing written) if it is a file or cannot be made."""
    if out.exists() and not out.is_dir():
        raise FieldError(out, "OUT_DIR", "a folder to write the pages into (this is a file)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FieldError(out, "OUT_DIR", f"a folder that can be created ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise FieldError(out, "OUT_DIR", "a folder this user can write to")
    return out


def _render(args: argparse.Namespace) -> int:
    out = Path(args.out_dir)
    records = Path(args.records) if args.records else records_dir(Path("records"))
    docs = Path(args.docs) if args.docs else None
    try:
        settings = load_settings(args.settings)
        if args.records and not records.is_dir():
            raise FieldError(records, "--records", "a folder of records")
        if docs is not None and not docs.is_dir():
            raise FieldError(docs, "--docs", "the docs folder")
        _output_folder(out)
    except (SettingsError, FieldError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    site = load_site(records, docs, settings=settings, git=True, repository=Path.cwd())
    for err in site.errors:
        print(f"error: {err}", file=sys.stderr)
    try:
        written = write_pages(site, out, docs_dir=docs)
    except OSError as exc:
        failed = FieldError(exc.filename or out, "OUT_DIR", f"a file that can be written ({exc.strerror or exc})")
        print(f"error: {failed}", file=sys.stderr)
        return 1
    print(f"wrote {written} file(s) to {args.out_dir} from {len(site.records)} record(s)")
    return 1 if site.errors else 0


def _check_offline(args: argparse.Namespace) -> int:
    site_dir = Path(args.site_dir)
    if not site_dir.is_dir():
        print(f"error: {site_dir} is not a folder (build the site first: mkdocs build -d {site_dir})", file=sys.stderr)
        return 2
    try:
        workers = build_workers()  # the processes the files are checked in, as a build checks them
    except WorkersError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found = check_site(site_dir, tuple(args.allow), workers=workers)
    for v in found:
        print(f"error: {v}", file=sys.stderr)
    print(f"{len(found)} external reference(s) in {site_dir}")
    return 1 if found else 0


def register(sub: Any) -> None:
    r = sub.add_parser(
        "render",
        help="write every generated page (Markdown, raw JSON, CSV) to a folder",
        description="Render the records into the site's generated pages, without MkDocs.",
    )
    r.add_argument("out_dir", metavar="OUT_DIR")
    r.add_argument("--records", help=f"records folder (default: ${RECORDS_ENV} or ./records)")
    r.add_argument(
        "--docs",
        help="docs folder: also write its hand-written pages with shortcodes expanded, and read its dead ends",
    )
    r.add_argument("--settings", help=f"comparison settings (default: ./{DEFAULT_SETTINGS_FILE} if present)")
    r.set_defaults(handler=_render)
    c = sub.add_parser("check-offline", help="fail if a built site loads anything from outside")
    c.add_argument("site_dir", metavar="SITE_DIR")
    c.add_argument("--allow", action="append", default=[], help="allowed URL prefix (repeatable)")
    c.set_defaults(handler=_check_offline)
