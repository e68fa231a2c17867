"""The flat ``mean_ttft_ms`` / ``median_ttft_ms`` / ``p99_ttft_ms`` keys that SGLang's and vLLM's clients write."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bench.record import Metric
from bench.record.model import LevelErrors

from ._runs import dist

__all__ = ["flat_latency", "level_errors", "request_errors"]

_PCT = re.compile(r"^p(\d+(?:\.\d+)?)_(.+)_ms$")


def flat_latency(
    figures: Mapping[str, float], stem: str, *, formula: str, n: int | None, note: str | None = None
) -> Metric | None:
    """mean/median/std/p90/p99/min/max of ``<stat>_<stem>_ms``; other percentiles go into the note (kept, not lost).
    ``figures``: the document's ``*_ms`` keys, already checked to be finite numbers."""
    extra = [
        f"p{m.group(1)} = {value:.6g} ms"
        for key, value in sorted(figures.items())
        if (m := _PCT.match(key)) and m.group(2) == stem and m.group(1) not in ("50", "90", "99")
    ]
    median = figures.get(f"median_{stem}_ms")
    notes = [x for x in (note, "stdev is numpy's population std" if f"std_{stem}_ms" in figures else None) if x]
    if extra:
        notes.append("also stated: " + ", ".join(extra))
    return dist(
        "ms",
        formula,
        n=n,
        note="; ".join(notes) or None,
        mean=figures.get(f"mean_{stem}_ms"),
        p50=median if median is not None else figures.get(f"p50_{stem}_ms"),
        p90=figures.get(f"p90_{stem}_ms"),
        p99=figures.get(f"p99_{stem}_ms"),
        stdev=figures.get(f"std_{stem}_ms"),
        min=figures.get(f"min_{stem}_ms"),
        max=figures.get(f"max_{stem}_ms"),
    )


def request_errors(errors: list[str | None] | None) -> list[str] | None:
    """The per-request ``errors`` array (one entry per request sent, "" when it succeeded), if written."""
    return None if errors is None else [e or "" for e in errors]


def level_errors(failed: int | None, sent: int | None, errors: list[str] | None) -> LevelErrors | None:
    """A level's failed requests: their count, up to three distinct errors (each its last line) and the rate over
    the requests sent; None when none failed."""
    if not failed:
        return None
    examples = [e.strip().splitlines()[-1][:200] if e.strip() else "error" for e in errors or [] if e]
    return LevelErrors(
        by_kind={"request error": failed},
        examples=list(dict.fromkeys(examples))[:3],
        error_rate=failed / sent if sent else None,
    )
