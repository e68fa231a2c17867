"""Per-level figures that explain the speed figures: prefix-cache hits and the two speculative figures.

Pure renderers (levels in, Markdown or CSV cells out) used by the record page and its CSV export.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.record.model import Level

from .escape import md_text
from .fmt import fmt_metric, fmt_number
from .levels import level_name
from .tables import md_table

__all__ = [
    "cache_hit_cell",
    "figure_csv_columns",
    "figure_csv_values",
    "prefix_cache_section",
    "speculative_section",
]

DASH = "—"


def _int(v: int | None) -> str:
    return fmt_number(v) if v is not None else DASH


def cache_hit_cell(lv: Level) -> str:
    """The level's cache-hit share as a percentage ("—" when the server reported no cached tokens)."""
    pc = lv.prefix_cache
    return f"{pc.hit_share:.1%}" if pc is not None else DASH


def prefix_cache_section(levels: Sequence[Level]) -> str:
    """Cached prompt tokens per level with their inputs and source; empty when no level reports them."""
    rows = [
        [
            md_text(level_name(lv)),
            cache_hit_cell(lv),
            _int(pc.cached_tokens),
            _int(pc.input_tokens),
            _int(pc.requests),
            md_text(pc.source),
        ]
        for lv in levels
        if (pc := lv.prefix_cache) is not None
    ]
    if not rows:
        return ""
    intro = (
        "Prompt tokens the server served from its prefix cache (radix cache, slot reuse) instead of computing "
        "them, as the server reported per request: share = Σ cached ÷ Σ prompt tokens over the requests that "
        "report both. A high share lowers TTFT and raises throughput; it comes from the workload repeating "
        "prompts (see *Prefix* under Workload), so compare it before comparing speeds.\n\n"
    )
    header = ["Level", "Cache-hit share", "Cached prompt tokens", "Prompt tokens", "Requests", "Source"]
    return "## Prefix cache, per level\n\n" + intro + md_table(header, rows, align="lrrrrl") + "\n"


def _missing_lines(levels: Sequence[Level]) -> list[str]:
    """One line per distinct reason, naming the levels it applies to."""
    by_reason: dict[str, list[str]] = {}
    for lv in levels:
        if lv.speculative is not None:
            for reason in lv.speculative.missing:
                by_reason.setdefault(reason, []).append(level_name(lv))
    return [f"- {md_text(', '.join(names))}: {md_text(reason)}" for reason, names in by_reason.items()]


def speculative_section(levels: Sequence[Level]) -> str:
    """Accept length and acceptance rate side by side with the summed inputs each rests on; what is missing."""
    rows = []
    for lv in levels:
        s = lv.speculative
        if s is None:
            continue
        length, rate = s.accept_length, s.acceptance_rate
        rows.append(
            [
                md_text(level_name(lv)),
                fmt_metric(length) + (f" (n={length.n})" if length is not None and length.n is not None else ""),
                _int(s.output_tokens),
                _int(s.verify_steps),
                fmt_metric(rate) + (f" (n={rate.n})" if rate is not None and rate.n is not None else ""),
                _int(s.accepted_tokens),
                _int(s.draft_tokens),
                md_text(s.method) if s.method else DASH,
            ]
        )
    if not rows:
        return ""
    header = [
        "Level",
        "Accept length (tokens/step)",
        "Output tokens",
        "Verify steps",
        "Acceptance rate",
        "Accepted drafts",
        "Proposed drafts",
        "Read from",
    ]
    intro = (
        "Two different figures, each from its own inputs and never converted into the other: accept length = "
        "Σ output tokens ÷ Σ verify steps (tokens per target-model forward pass, at least 1); acceptance rate = "
        "Σ accepted ÷ Σ proposed draft tokens (0 to 1). *n* is the number of requests summed.\n\n"
    )
    out = "## Speculative decoding, per level\n\n" + intro + md_table(header, rows, align="lrrrrrrl") + "\n"
    missing = _missing_lines(levels)
    if missing:
        out += "\nNot measurable from these responses:\n\n" + "\n".join(missing) + "\n"
    return out


_SPEC_COLUMNS = ("acceptance_rate", "spec_output_tokens", "verify_steps", "draft_tokens", "accepted_tokens")
_CACHE_COLUMNS = ("cache_hit_share", "cached_tokens", "cache_prompt_tokens")


def figure_csv_columns(levels: Sequence[Level]) -> list[str]:
    """The CSV columns for these figures that some level states (after the ``accept_length`` column)."""
    cols: list[str] = []
    if any(lv.speculative is not None for lv in levels):
        cols += _SPEC_COLUMNS
    if any(lv.prefix_cache is not None for lv in levels):
        cols += _CACHE_COLUMNS
    return cols


def figure_csv_values(lv: Level, columns: Sequence[str]) -> list[object]:
    s, pc = lv.speculative, lv.prefix_cache
    values: dict[str, object] = {}
    if s is not None:
        values.update(
            acceptance_rate=s.acceptance_rate.headline() if s.acceptance_rate else None,
            spec_output_tokens=s.output_tokens,
            verify_steps=s.verify_steps,
            draft_tokens=s.draft_tokens,
            accepted_tokens=s.accepted_tokens,
        )
    if pc is not None:
        values.update(cache_hit_share=pc.hit_share, cached_tokens=pc.cached_tokens, cache_prompt_tokens=pc.input_tokens)
    return [values.get(c) for c in columns]
