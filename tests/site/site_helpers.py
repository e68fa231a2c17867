"""Loading the records the site tests render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import markdown
import yaml

from bench.record.load import load_record
from bench.record.model import Record
from bench.site import SiteData, expand_shortcodes, load_site, site_pages

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "records"
SHIPPED = ROOT / "records"
DOCS = ROOT / "docs"

BASELINE_ID = "20261130T231000Z-baseline-797fdbd"
EAGLE_ID = "20261130T231000Z-eagle3-339e97f"
FX_BASELINE_ID = "20261201T090000Z-baseline-a1b2c3d"
FX_EAGLE_ID = "20261201T100000Z-eagle3-b2c3d4e"
HOSTILE_ID = "20261201T110000Z-hostile-c3d4e5f"


def shipped(record_id: str) -> Record:
    return load_record(SHIPPED / "eagle-fast-verify" / f"{record_id}.json").record


def fixture(record_id: str) -> Record:
    for path in FIXTURES.rglob(f"{record_id}.json"):
        return load_record(path).record
    raise FileNotFoundError(record_id)


def shipped_site() -> SiteData:
    return load_site(SHIPPED, DOCS)


def fixture_site() -> SiteData:
    return load_site(FIXTURES, DOCS)


def run_command(argv: list[str]) -> int:
    """Run one of bench.site's sub-commands (render, check-offline) as ``bench`` would."""
    import argparse

    from bench.site.commands import register

    parser = argparse.ArgumentParser(prog="bench")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


def site_of(*records: Record, settings: object | None = None) -> SiteData:
    """A SiteData over in-memory records (no files, no git)."""
    from bench.record.load import LoadedRecord
    from bench.settings import Settings

    loaded = tuple(LoadedRecord(r, Path(f"/nowhere/{r.experiment}/{r.id}.json"), "") for r in records)
    return SiteData(records=loaded, settings=settings if isinstance(settings, Settings) else Settings())


def with_figures(record: Record, record_id: str, factor: float, *, minutes: int = 0) -> Record:
    """A copy of ``record`` with a new id, created ``minutes`` later, every headline figure scaled by ``factor``."""
    from datetime import timedelta

    data = record.model_dump(mode="json", exclude_none=True)
    data["id"] = record_id
    created = record.created_at + timedelta(minutes=minutes)
    data["created_at"] = created.isoformat()
    data["provenance"].pop("measured_at", None)
    for level in data["levels"]:
        level.pop("samples", None)
        for value in level.values():
            if isinstance(value, dict) and "formula" in value:
                for stat in ("value", "mean", "p50", "p90", "p99", "min", "max"):
                    if isinstance(value.get(stat), int | float):
                        value[stat] = value[stat] * factor
    return Record.model_validate(data)


def site_markdown() -> markdown.Markdown:
    """Python-Markdown with the extensions and settings of mkdocs.yml."""
    exts: list[str] = []
    conf: dict[str, Any] = {}
    for ext in yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["markdown_extensions"]:
        if isinstance(ext, dict):
            ((name, settings),) = ext.items()
            exts.append(name)
            conf[name] = settings or {}
        else:
            exts.append(ext)
    return markdown.Markdown(extensions=exts, extension_configs=conf)


SPLIT_PER_PAGE = 5  # records a list holds in every_page_markdown's split index: fewer than the shipped records


def every_page_markdown(site: SiteData) -> list[tuple[str, str]]:
    """Every generated page's and hand-written page's Markdown (shortcodes expanded, front matter cut), and the
    records index split by experiment with its lists (``split:``-prefixed paths), as the site would show them past
    ``SPLIT_PER_PAGE`` records."""
    texts = [(path, text) for path, text in site_pages(site) if path.endswith(".md")]
    split = site_pages(site, records_per_page=SPLIT_PER_PAGE, record_pages=False)
    texts += [(f"split:{path}", text) for path, text in split if path.startswith("records/") and path.endswith(".md")]
    for path in sorted(DOCS.rglob("*.md")):
        src = path.relative_to(DOCS).as_posix()
        texts.append((src, expand_shortcodes(path.read_text(encoding="utf-8"), site, src)))
    return [(path, text[text.index("\n---\n", 4) + 5 :] if text.startswith("---\n") else text) for path, text in texts]
