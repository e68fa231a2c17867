"""Reading another tool's result file: the JSON, JSON Lines or YAML reader of ``bench.record`` (NaN, Infinity and
keys given twice refused at their field), then a pydantic model of the tool's document, so every bad value is
refused by the schema and named in the project's one error shape (``<file>: field '<f>': <expected>``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

from bench.errors import from_validation_error, read_text_file, read_yaml_file
from bench.record import RecordError
from bench.record.load import loads_json, non_finite_field

__all__ = [
    "Count",
    "Number",
    "Rate",
    "Source",
    "parse_json",
    "parse_json_lines",
    "read_text",
    "read_yaml",
    "stated_figures",
    "validate",
]

M = TypeVar("M", bound="Source")


class Source(BaseModel):
    """A part of a tool's document: the fields read are typed, every other key is kept (``model_extra``) as the
    configuration the run was made with."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @property
    def extra(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A finite number (an int or a float; not a string, not a boolean)."""


def _near_whole(value: Any) -> Any:
    """Tools that sum counts in floating point write 593.9999999999999 for 594 (guidellm 0.8.1 does)."""
    if isinstance(value, float) and math.isfinite(value) and abs(value - round(value)) <= 1e-6 * max(1.0, abs(value)):
        return round(value)
    return value


Count = Annotated[StrictInt, BeforeValidator(_near_whole), Field(ge=0)]
"""A non-negative whole number (a float within 1e-6 of one is that number)."""

Rate = Annotated[float, Field(strict=True, ge=0)] | Literal["inf", "Infinity"]
"""A request rate: a number, or +Infinity (or vLLM's string ``"inf"``) for all requests at once."""


def validate(model: type[M], obj: Any, path: Path, where: str = "") -> M:
    """``obj`` as ``model``; a bad value raises RecordError naming the file and the field (prefixed by ``where``,
    e.g. ``"line 3: "``)."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        err = from_validation_error(RecordError, path, exc)
        field = "" if err.field == RecordError.whole else err.field
        raise RecordError(path, f"{where}{field}".removesuffix(": "), err.expected) from None


_FIGURES = TypeAdapter(dict[str, Number])


def stated_figures(source: Source, suffix: str, path: Path, where: str = "") -> dict[str, float]:
    """Every key of ``source`` ending in ``suffix`` (``mean_ttft_ms``, ``p95_itl_ms``...) as a finite number."""
    keys = {k: v for k, v in source.extra.items() if k.endswith(suffix) and v is not None}
    try:
        return _FIGURES.validate_python(keys)
    except ValidationError as exc:
        err = from_validation_error(RecordError, path, exc)
        raise RecordError(path, f"{where}{err.field}", err.expected) from None


def read_text(path: Path) -> str:
    return read_text_file(path, RecordError)


def parse_json(text: str, path: Path, *, infinite_ok: frozenset[str] = frozenset()) -> Any:
    """One JSON document, read as records are (see :func:`bench.record.load.loads_json`)."""
    return loads_json(text, path, infinite_ok=infinite_ok)


def parse_json_lines(text: str, path: Path, *, infinite_ok: frozenset[str] = frozenset()) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON Lines file; errors name the line."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield lineno, loads_json(line, path, line=lineno, where=f"line {lineno}: ", infinite_ok=infinite_ok)


def read_yaml(path: Path) -> Any:
    """One YAML document (a key given twice refused); ``.nan`` and ``.inf`` refused at their field."""
    data = read_yaml_file(path, RecordError)
    found = non_finite_field(data)
    if found is not None:
        raise RecordError(path, found[0], f"a finite number (got {found[1]})")
    return data
