"""The one shape of a bad-input error in benchbook: it names the file, the field and what was expected.

Records, run configs, ``benchbook.yaml`` and dead-end front matter all raise a subclass of ``FieldError``,
so every message reads ``<file>: field '<field>': <expected>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import ValidationError

__all__ = ["FieldError", "field_path", "from_validation_error", "read_text_file", "read_yaml_file"]

E = TypeVar("E", bound="FieldError")


class FieldError(Exception):
    whole = "(whole file)"  # what ``field`` says when the problem is not one field

    def __init__(self, path: Path | str, field: str, expected: str) -> None:
        self.path = str(path)
        self.field = field or self.whole
        self.expected = expected
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: field '{self.field}': {self.expected}"


def field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's error location as a dotted path with list indexes: ``levels[0].ttft_ms.formula``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def from_validation_error(
    cls: type[E], path: Path | str, exc: ValidationError, *, skip: frozenset[str] = frozenset()
) -> E:
    """The first error of a pydantic ``ValidationError`` as ``cls``; ``skip`` drops union-branch names
    (``int``, ``str``, ...) from the location."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in skip))
    shown = "nothing" if err["type"] == "missing" else json.dumps(err.get("input"), default=str)[:80]
    return cls(path, field_path(loc), f"{err['msg']} (got {shown})")


def read_text_file(path: Path, error: type[FieldError], *, what: str = "a readable UTF-8 file") -> str:
    """A whole file as text; an unreadable or non-UTF-8 file raises ``error`` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, "", f"{what} ({exc})") from None


def read_yaml_file(path: Path, error: type[FieldError], *, what: str = "a readable UTF-8 file") -> Any:
    """Parse one YAML file; an unreadable file or bad YAML raises ``error`` naming the line and column."""
    text = read_text_file(path, error, what=what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise error(path, where, f"valid YAML ({getattr(exc, 'problem', None) or exc})") from None
