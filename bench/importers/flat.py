"""The flat ``mean_ttft_ms`` / ``median_ttft_ms`` / ``p99_ttft_ms`` keys that SGLang's and vLLM's clients write."""

from __future__ import annotations

import re

from bench.record import Metric

from .base import Src, dist

__all__ = ["flat_latency", "per_request_errors"]

_PCT = re.compile(r"^p(\d+(?:\.\d+)?)_(.+)_ms$")


def flat_latency(src: Src, stem: str, *, formula: str, n: int | None, note: str | None = None) -> Metric | None:
    """mean/median/std/p90/p99/min/max of ``<stat>_<stem>_ms``; other percentiles go into the note (kept, not lost)."""
    extra: list[str] = []
    for key in sorted(src.obj):
        m = _PCT.match(key)
        if m and m.group(2) == stem and m.group(1) not in ("50", "90", "99"):
            v = src.num(key)
            if v is not None:
                extra.append(f"p{m.group(1)} = {v:.6g} ms")
    p50 = src.num(f"p50_{stem}_ms")
    median = src.num(f"median_{stem}_ms")
    notes = [x for x in (note, "stdev is numpy's population std" if src.has(f"std_{stem}_ms") else None) if x]
    if extra:
        notes.append("also stated: " + ", ".join(extra))
    return dist(
        "ms",
        formula,
        n=n,
        note="; ".join(notes) or None,
        mean=src.num(f"mean_{stem}_ms"),
        p50=median if median is not None else p50,
        p90=src.num(f"p90_{stem}_ms"),
        p99=src.num(f"p99_{stem}_ms"),
        stdev=src.num(f"std_{stem}_ms"),
        min=src.num(f"min_{stem}_ms"),
        max=src.num(f"max_{stem}_ms"),
    )


def per_request_errors(src: Src) -> list[str] | None:
    """The per-request ``errors`` array (one entry per request sent, "" when it succeeded), if written."""
    errors = src.list_("errors")
    if errors is None:
        return None
    if not all(isinstance(e, str) or e is None for e in errors):
        raise src.err("errors", "a list of strings")
    return [e or "" for e in errors]
