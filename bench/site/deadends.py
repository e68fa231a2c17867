"""Dead ends: hand-written pages under ``docs/dead-ends/`` whose YAML front matter is validated.

Front matter fields::

    title: Dynamically disabling EAGLE-3 speculation under load   # optional (else the first "# " heading)
    date: 2026-11-30
    experiment: eagle-fast-verify
    status: abandoned            # abandoned | parked | open | resolved | superseded
    related_records: [<record id>, ...]
    error_signature: "The size of tensor a (160) ..."   # optional
    decision: "Abandon ...; measure cleanly instead."
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.errors import FieldError, load_yaml
from bench.record.model import SLUG

from .paths import RECORD_ID_PATTERN

__all__ = ["DeadEnd", "DeadEndError", "DeadEndMeta", "parse_dead_end"]

_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*\n", re.DOTALL)
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
    m = _FRONT.match(text)
    if not m:
        raise DeadEndError(where, "", "YAML front matter between '---' lines at the top of the file")
    try:
        data = load_yaml(m.group(1) or "")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 2}" if mark is not None else ""
        raise DeadEndError(where, at, f"valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise DeadEndError(where, "", f"a mapping of fields, got {type(data).__name__}")
    try:
        meta = DeadEndMeta.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        got = "nothing" if err["type"] == "missing" else repr(err.get("input"))[:80]
        raise DeadEndError(where, field, f"{err['msg']} (got {got})") from None
    title = meta.title
    if not title:
        h1 = _H1.search(text, m.end())
        title = h1.group(1) if h1 else path.rsplit("/", 1)[-1].removesuffix(".md")
    return DeadEnd(path=path, meta=meta, title=title)
