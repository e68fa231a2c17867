"""Dead ends: hand-written pages under ``docs/dead-ends/`` whose YAML front matter is validated.

Front matter fields::

    title: Dynamically disabling EAGLE-3 speculation under load   # optional (else the first "# " heading)
    date: 2026-11-30
    experiment: eagle-fast-verify
    status: abandoned            # abandoned | parked | open | resolved | superseded
    related_records: [<record id>, ...]
    error_signature: "The size of tensor a (160) ..."   # optional
    decision: "Abandon ...; measure cleanly instead."

This module reads them (:func:`load_dead_ends`, :func:`parse_dead_end`) and renders their parts: the list of dead
ends, the summary box under a dead end's title, the dead-ends index page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.errors import FieldError, from_validation_error, load_yaml
from bench.md_table import md_table
from bench.record.load import LoadedRecord
from bench.record.model import SLUG

from ._escape import md_code, md_text
from ._front_matter import split_front_matter
from ._markup import admonition, errors_box
from ._paths import DEAD_ENDS_INDEX, RECORD_ID_PATTERN, experiment_link, link, record_link

__all__ = [
    "DEAD_ENDS_DIR",
    "DeadEnd",
    "DeadEndError",
    "DeadEndMeta",
    "dead_end_page",
    "dead_ends_index",
    "dead_ends_list",
    "load_dead_ends",
    "parse_dead_end",
]

DEAD_ENDS_DIR = "dead-ends"
_H1 = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)


class DeadEndError(FieldError):
    """Bad dead-end front matter: names the file, the field and what was expected."""

    whole = "(front matter)"


class DeadEndMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str | None = None
    date: date
    experiment: str = Field(pattern=SLUG)
    status: Literal["abandoned", "parked", "open", "resolved", "superseded"]
    related_records: list[Annotated[str, Field(pattern=RECORD_ID_PATTERN)]] = Field(default_factory=list)
    error_signature: str | None = None
    decision: str = Field(min_length=1)


@dataclass(frozen=True)
class DeadEnd:
    path: str  # relative to the docs folder, e.g. "dead-ends/dynamic-spec-disable.md"
    meta: DeadEndMeta
    title: str

    @property
    def slug(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")


def parse_dead_end(text: str, path: str, *, shown_path: str | None = None) -> DeadEnd:
    """Parse and validate one dead-end page; ``shown_path`` names the file in errors (default ``path``)."""
    where = shown_path or path
    front, block, _ = split_front_matter(text)
    if front is None:
        raise DeadEndError(where, "", "YAML front matter between '---' lines at the top of the file")
    try:
        data = load_yaml(front)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 2}" if mark is not None else ""
        raise DeadEndError(where, at, f"valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise DeadEndError(where, "", f"a mapping of fields, got {type(data).__name__}")
    try:
        meta = DeadEndMeta.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(DeadEndError, where, exc) from None
    title = meta.title
    if not title:
        h1 = _H1.search(text, len(block))
        title = h1.group(1) if h1 else path.rsplit("/", 1)[-1].removesuffix(".md")
    return DeadEnd(path=path, meta=meta, title=title)


def load_dead_ends(docs_dir: Path) -> tuple[list[DeadEnd], list[DeadEndError]]:
    """Every dead end under ``docs_dir/dead-ends/`` (newest first), and the errors of those that do not parse."""
    folder = docs_dir / DEAD_ENDS_DIR
    found: list[DeadEnd] = []
    errors: list[DeadEndError] = []
    if not folder.is_dir():
        return found, errors
    for path in sorted(folder.glob("*.md")):
        if path.name == "index.md":
            continue
        rel = f"{DEAD_ENDS_DIR}/{path.name}"
        try:
            found.append(parse_dead_end(path.read_text(encoding="utf-8"), rel, shown_path=str(path)))
        except DeadEndError as exc:
            errors.append(exc)
    found.sort(key=lambda d: (d.meta.date, d.path), reverse=True)
    return found, errors


# ---------------------------------------------------------------- rendering (pure)


def dead_ends_list(dead_ends: Sequence[DeadEnd], page: str) -> str:
    if not dead_ends:
        return "*No dead ends recorded.*"
    lines = []
    for d in dead_ends:
        m = d.meta
        lines.append(
            f"- **[{md_text(d.title)}]({link(page, d.path)})** ({m.date.isoformat()}, {md_text(m.status)}): "
            f"{md_text(m.decision)}"
        )
    return "\n".join(lines)


def _related_records(ids: Sequence[str], by_id: Mapping[str, LoadedRecord], page: str) -> str:
    parts = []
    for rid in ids:
        loaded = by_id.get(rid)
        if loaded is not None:
            parts.append(record_link(loaded.record, page))
        else:
            parts.append(f"{md_code(rid)} (not in the records of this build)")
    return ", ".join(parts) if parts else "none"


def _summary(dead_end: DeadEnd, by_id: Mapping[str, LoadedRecord], page: str) -> str:
    """The box at the top of a dead-end page, rendered from its front matter."""
    m = dead_end.meta
    lines = [
        f"**Date:** {m.date.isoformat()} · **Status:** {md_text(m.status)} · "
        f"**Experiment:** {experiment_link(m.experiment, page)}",
        "",
        f"**Decision:** {md_text(m.decision)}",
        "",
        f"**Related records:** {_related_records(m.related_records, by_id, page)}",
    ]
    if m.error_signature:
        lines += ["", f"**Error signature:** {md_code(m.error_signature)}"]
    return admonition("abstract", f"Dead end: {md_text(m.status)}", "\n".join(lines))


def dead_end_page(markdown: str, dead_end: DeadEnd, by_id: Mapping[str, LoadedRecord]) -> str:
    """A dead-end page's Markdown with its front-matter summary box placed under the title."""
    box = _summary(dead_end, by_id, dead_end.path)
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], "", box, *lines[i + 1 :]])
    return box + "\n" + markdown


def dead_ends_index(dead_ends: Sequence[DeadEnd], errors: Sequence[Exception]) -> str:
    page = DEAD_ENDS_INDEX
    rows = [
        [
            d.meta.date.isoformat(),
            f"[{md_text(d.title)}]({link(page, d.path)})",
            experiment_link(d.meta.experiment, page),
            md_text(d.meta.status),
            md_text(d.meta.decision),
        ]
        for d in dead_ends
    ]
    intro = (
        "Approaches that were tried and given up, with the reason and the decision taken, so nobody walks into them "
        "again unawares. Each is a page under `docs/dead-ends/` with validated front matter."
    )
    bad = [e for e in errors if isinstance(e, DeadEndError)]
    table = md_table(["Date", "Dead end", "Experiment", "Status", "Decision"], rows) or "*No dead ends recorded.*"
    return "\n".join(["# Dead ends", "", errors_box(bad), intro, "", table, ""])
