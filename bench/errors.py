"""The one shape of a bad-input error in benchbook: it names the file, the field and what was expected.

Records, run configs, ``benchbook.yaml`` and dead-end front matter all raise a subclass of ``FieldError``,
so every message reads ``<file>: field '<field>': <expected>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from bench.redact import redact_text

__all__ = [
    "FieldError",
    "field_path",
    "from_validation_error",
    "load_yaml",
    "parse_mapping",
    "read_text_file",
    "read_yaml_file",
]

E = TypeVar("E", bound="FieldError")
M = TypeVar("M", bound=BaseModel)


class FieldError(Exception):
    whole = "(whole file)"  # what ``field`` says when the problem is not one field

    def __init__(self, path: Path | str, field: str, expected: str) -> None:
        self.path = str(path)
        self.field = field or self.whole
        self.expected = expected
        super().__init__(str(self))

    def __str__(self) -> str:
        # an error quotes what it got: a key or token in the input is hidden before the message is shown
        return redact_text(f"{self.path}: field '{self.field}': {self.expected}")


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
    (``int``, ``str``, ...) from the location. The message quotes the bad value (cut, secrets hidden), except
    when the whole file is at fault (a rule across fields), where it would quote the whole file."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in skip))
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not loc:
        return cls(path, "", msg)
    shown = "nothing" if err["type"] == "missing" else _shown(err.get("input"))
    return cls(path, field_path(loc), f"{msg} (got {shown})")


def parse_mapping(
    model: type[M],
    data: Any,
    path: Path | str,
    error: type[FieldError],
    *,
    what: str,
    skip: frozenset[str] = frozenset(),
) -> M:
    """A parsed document (YAML or JSON) as ``model``. An empty document is an empty mapping; anything but a mapping
    raises ``error`` saying ``what`` was expected; a bad field raises ``error`` naming it."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(path, "", f"{what}, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(error, path, exc, skip=skip) from None


def _shown(value: Any, limit: int = 80) -> str:
    """What an error quotes of a bad value: cut to a few times ``limit`` (a secret in the part shown is whole in
    what is redacted), redacted, then cut to ``limit``; a long text says how long it is."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    text = redact_text(text[: 4 * limit])
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if isinstance(value, str) and len(value) > limit:
        text += f" ({len(value):,} characters)"
    return text


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that gives one key twice (PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base loader reports it
                break
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"the key {json.dumps(key, default=str)} appears twice (first on line {first + 1}); "
                    "give each key once",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping (raises ``yaml.YAMLError`` with its line)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass: no arbitrary objects


def read_text_file(path: Path, error: type[FieldError], *, what: str = "a readable UTF-8 file") -> str:
    """A whole file as text; an unreadable or non-UTF-8 file raises ``error`` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, "", f"{what} ({exc})") from None


def read_yaml_file(path: Path, error: type[FieldError], *, what: str = "a readable UTF-8 file") -> Any:
    """Parse one YAML file; an unreadable file, bad YAML or a key given twice in one mapping raises ``error``
    naming the line and column."""
    text = read_text_file(path, error, what=what)
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise error(path, where, f"valid YAML ({getattr(exc, 'problem', None) or exc})") from None
