"""The error type for bad records: it names the file, the field and what was expected."""

from __future__ import annotations

from bench.errors import FieldError

__all__ = ["RecordError"]


class RecordError(FieldError):
    """A record that cannot be read, migrated or validated."""
