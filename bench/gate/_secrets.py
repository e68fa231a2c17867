"""The gate's secret scan: ``bench.redact.find_secrets`` over the raw JSON of an added file, before any loading,
migration or redaction. It answers with field paths, never values: a path is itself passed through
``redact_text``, since a secret can sit in a key (``server.args["sk-…"]``)."""

from __future__ import annotations

from bench.record.load import loads_bounded
from bench.redact import find_secrets, redact_text

__all__ = ["secret_fields", "secret_reason", "without_quoted_input"]

_SHOWN_FIELDS = 12


def secret_fields(data: bytes | None) -> list[str]:
    """The dotted field paths of a raw JSON file that hold what looks like a secret ([] when the file is not JSON:
    the loader reports that, without quoting the content)."""
    if data is None:
        return []
    try:
        tree = loads_bounded(data.decode("utf-8"))  # the walk below recurses: too deep is left to the loader
    except (UnicodeDecodeError, ValueError):
        return []
    return sorted({redact_text(p) for p in find_secrets(tree)})


def secret_reason(fields: list[str]) -> str:
    shown = ", ".join(fields[:_SHOWN_FIELDS])
    more = f" and {len(fields) - _SHOWN_FIELDS} more" if len(fields) > _SHOWN_FIELDS else ""
    return (
        f"holds what looks like a secret in {len(fields)} field(s): {shown}{more}. Records are public: remove the "
        "value (the harness writes <redacted>) and, if it is a credential, rotate it; the value is not repeated here"
    )


def without_quoted_input(expected: str) -> str:
    """A validation message without the input it quotes (``… (got "…")``): for files that hold a secret."""
    cut = expected.rfind(" (got ")
    return (expected[:cut] if cut >= 0 else expected) + " (the value is not repeated: the file holds a secret)"
