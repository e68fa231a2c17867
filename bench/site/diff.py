"""The environment diff on the site: every field in which two records differ (``bench.compare.environment_diff``)."""

from __future__ import annotations

import json
from typing import Any

from bench.compare import environment_diff
from bench.record.model import Record

from .claims import CLAIMED
from .escape import md_code, md_text
from .fmt import NOT_STATED
from .tables import md_table

__all__ = ["diff_table"]

MAX_VALUE = 300  # characters of a value shown in a cell (a whole launch command can be long)


def _value(v: Any) -> str:
    if v is None:
        return f"*{NOT_STATED}*"
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    if len(text) > MAX_VALUE:
        text = text[: MAX_VALUE - 1] + "…"
    return md_text(text)


def diff_table(a: Record, b: Record, label_a: str, label_b: str) -> str:
    """Field | role | a | b for each differing field (context first); one line when nothing differs."""
    rows = environment_diff(a, b)
    if not rows:
        return "*The two records do not differ in any field (levels, ids and timestamps aside).*\n"
    body = [
        [
            md_code(d.field),
            "**context**" if d.role == "context" else "info",
            _value(d.a) + (f" {CLAIMED}" if d.claimed_a else ""),
            _value(d.b) + (f" {CLAIMED}" if d.claimed_b else ""),
        ]
        for d in rows
    ]
    n_ctx = sum(d.role == "context" for d in rows)
    summary = (
        f"{len(rows)} field(s) differ, {n_ctx} of them context (a context difference splits a comparison; "
        "info is shown only)."
    )
    if any(d.claimed_a or d.claimed_b for d in rows):
        summary += f" A value marked {CLAIMED} is only the run config's statement: the server did not report it."
    return summary + "\n\n" + md_table(["Field", "Role", md_text(label_a), md_text(label_b)], body) + "\n"
