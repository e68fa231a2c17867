"""The one error type for bad records: it names the file, the field and what was expected."""

from __future__ import annotations

from pathlib import Path

__all__ = ["RecordError"]


class RecordError(Exception):
    def __init__(self, path: Path | str, field: str, expected: str) -> None:
        self.path = str(path)
        self.field = field or "(whole file)"
        self.expected = expected
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: field '{self.field}': {self.expected}"
