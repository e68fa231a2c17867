"""A record page's level tables (pure): the levels table, latency distributions, speculative decoding and
prefix-cache figures, errors, the client's own load, and how each figure was computed.

The levels table's figures come from the record's rows of :func:`bench.dataframe.frame_rows`, the rows its CSV
download is written from, so the page and the CSV cannot disagree. Wide tables scroll in their own box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.figures import FIGURES, figure, format_figure
from bench.level_order import level_name
from bench.md_table import md_table
from bench.record.model import Level, Metric

from ._escape import md_code, md_text
from ._format import DASH, NOT_STATED, fmt_metric, fmt_stat
from ._markup import scroll_box

__all__ = ["level_sections", "levels_table"]

Row = Mapping[str, Any]
# The figures the levels table shows (the distributions table shows the latencies).
TABLE_FIGURES: tuple[str, ...] = (
    "output_throughput",
    "total_throughput",
    "request_throughput",
    "per_request_tok_s",
    "per_request_tok_s_e2e",
    "cache_hit_share",
)
DISTRIBUTIONS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "per_request_tok_s", "per_request_tok_s_e2e")


def _int(v: int | float | None) -> str:
    return format_figure(v) if v is not None else DASH


def _figure_cell(key: str) -> Callable[[Level, Row], str]:
    def cell(_lv: Level, row: Row) -> str:
        if key == "cache_hit_share":
            v = row.get(key)
            return f"{v:.1%}" if v is not None else DASH
        return format_figure(row.get(key), approximate=bool(row.get(f"{key}_approx")))

    return cell


def _tokens(lv: Level, _row: Row) -> str:
    t = lv.output_tokens
    return f"{format_figure(t.total)} ({md_text(t.source)})" if t and t.total is not None else DASH


def _finish(lv: Level, _row: Row) -> str:
    return md_text(", ".join(f"{k}: {v}" for k, v in sorted(lv.finish_reasons.items()))) or DASH


def levels_table(levels: Sequence[Level], rows: Sequence[Row]) -> str:
    """One row per level; columns only for what some level states (the others are named under the table)."""
    by_key = {row["level"]: row for row in rows}
    cols: list[tuple[str, Callable[[Level, Row], str]]] = []
    if any(lv.failed for lv in levels):
        cols.append(("Level failed", lambda lv, _r: f"**failed**: {md_text(lv.failure)}" if lv.failure else DASH))
    cols += [
        ("Requests sent", lambda lv, _r: _int(lv.requests_sent)),
        ("Completed", lambda lv, _r: _int(lv.requests_completed)),
        ("Failed", lambda lv, _r: _int(lv.requests_failed)),
        ("Warm-up", lambda lv, _r: _int(lv.warmup_requests)),
        ("Duration (s)", lambda lv, _r: _int(lv.duration_s)),
        *((figure(k).title, _figure_cell(k)) for k in TABLE_FIGURES),
        ("Output tokens (source)", _tokens),
        ("Finish reasons", _finish),
        ("Samples kept", lambda lv, _r: str(len(lv.samples.ttft_ms)) if lv.samples else DASH),
    ]
    cells = {name: [fn(lv, by_key.get(lv.key, {})) for lv in levels] for name, fn in cols}
    kept = [name for name, _ in cols if any(c != DASH for c in cells[name])]
    empty = [name for name, _ in cols if name not in kept]
    body = [[md_text(level_name(lv)), *(cells[name][i] for name in kept)] for i, lv in enumerate(levels)]
    out = scroll_box(md_table(["Level", *(md_text(n) for n in kept)], body, align="l" + "r" * len(kept)))
    if empty:
        out += f"\nNot stated for any level of this record: {md_text(', '.join(empty))}.\n"
    return out


def _distributions(levels: Sequence[Level]) -> str:
    rows = []
    for lv in levels:
        for key in DISTRIBUTIONS:
            spec = figure(key)
            m = spec.metric(lv)
            if m is None or all(getattr(m, s) is None for s in ("mean", "p50", "p90", "p99")):
                continue
            stats = (fmt_stat(m, s) for s in ("mean", "p50", "p90", "p99", "min", "max"))
            rows.append([md_text(level_name(lv)), md_text(spec.title), *stats, _int(m.n)])
    if not rows:
        return ""
    table = md_table(["Level", "Figure", "mean", "p50", "p90", "p99", "min", "max", "n"], rows, align="llrrrrrrr")
    return (
        "## Latency and per-request distributions\n\n"
        + scroll_box(table)
        + "\n*n* is the number of requests each figure rests on; with fewer than about 100, p99 is close to the "
        "maximum.\n"
    )


def _speculative(levels: Sequence[Level]) -> str:
    """Accept length and acceptance rate side by side with the summed inputs each rests on; what is missing."""
    rows = []
    missing: dict[str, list[str]] = {}
    for lv in levels:
        s = lv.speculative
        if s is None:
            continue
        for reason in s.missing:
            missing.setdefault(reason, []).append(level_name(lv))
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
    header = ["Level", "Accept length (tokens/step)", "Output tokens", "Verify steps", "Acceptance rate"]
    header += ["Accepted drafts", "Proposed drafts", "Read from"]
    intro = (
        "Two different figures, each from its own inputs and never converted into the other: accept length = "
        "Σ output tokens ÷ Σ verify steps (tokens per target-model forward pass, at least 1); acceptance rate = "
        "Σ accepted ÷ Σ proposed draft tokens (0 to 1). *n* is the number of requests summed.\n\n"
    )
    out = "## Speculative decoding, per level\n\n" + intro + scroll_box(md_table(header, rows, align="lrrrrrrl"))
    if missing:
        lines = [f"- {md_text(', '.join(names))}: {md_text(reason)}" for reason, names in missing.items()]
        out += "\nNot measurable from these responses:\n\n" + "\n".join(lines) + "\n"
    return out


def _prefix_cache(levels: Sequence[Level]) -> str:
    """Cached prompt tokens per level with their inputs and source; empty when no level reports them."""
    rows = [
        [
            md_text(level_name(lv)),
            f"{pc.hit_share:.1%}",
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


def _errors(levels: Sequence[Level]) -> str:
    rows = []
    for lv in levels:
        e = lv.errors
        if e is None or (not e.by_kind and not e.examples and not e.error_rate):
            continue
        rate = f"{e.error_rate:.1%}" if e.error_rate is not None else NOT_STATED
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(e.by_kind.items()))
        examples = "; ".join(x[:200] for x in e.examples[:3])
        flagged = "**yes**" if e.flagged else "no"
        rows.append([md_text(level_name(lv)), rate, flagged, md_text(kinds) or DASH, md_text(examples) or DASH])
    if not rows:
        return ""
    return "## Errors\n\n" + md_table(["Level", "Error rate", "Flagged", "By kind", "Examples"], rows) + "\n"


def _client_load(levels: Sequence[Level]) -> str:
    """The harness's own CPU use per level, to compare with its measured ceiling before blaming the server."""
    rows = [
        [
            md_text(level_name(lv)),
            f"{lv.client.cpu_percent:,.1f}",
            f"{lv.client.token_events_per_s:,.0f}",
            f"{lv.client.token_events:,}",
            f"{lv.client.wall_s:,.1f}",
        ]
        for lv in levels
        if lv.client is not None
    ]
    if not rows:
        return ""
    intro = (
        "What the benchmark client itself spent on each level (warm-up included; 100% = one core). Compare the "
        "token-event rate with the client's ceiling measured by `benchmarks/client_ceiling.py` on the same host "
        "before reading a plateau as the server's.\n\n"
    )
    header = ["Level", "Client CPU %", "Token events/s", "Token events", "Wall (s)"]
    return "## Benchmark client load\n\n" + intro + md_table(header, rows, align="lrrrr") + "\n"


def _figure_notes(levels: Sequence[Level]) -> str:
    """Formula names and the source's notes on figures, so every number says where it comes from."""
    formulas: dict[tuple[str, str, str], None] = {}
    notes = []
    for lv in levels:
        for spec in FIGURES:
            m = spec.metric(lv) if spec.stat is None and "." not in spec.field else None
            if isinstance(m, Metric):
                formulas[(spec.field, m.formula, m.unit)] = None
                if m.note:
                    notes.append(f"- {md_text(level_name(lv))}, {md_text(spec.field)}: {md_text(m.note)}")
    if not formulas:
        return ""
    rows = [[md_code(f), md_text(formula), md_text(unit)] for f, formula, unit in formulas]
    out = "## How the figures were computed\n\n" + md_table(["Field", "Formula", "Unit"], rows) + "\n"
    if notes:
        out += "\nNotes on figures:\n\n" + "\n".join(notes) + "\n"
    return out


def level_sections(levels: Sequence[Level]) -> tuple[str, str]:
    """(the sections between the levels table and the charts, the figure notes after the charts)."""
    parts = (_distributions(levels), _speculative(levels), _prefix_cache(levels), _errors(levels), _client_load(levels))
    return "\n".join(p for p in parts if p), _figure_notes(levels)
