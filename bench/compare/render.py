"""Renderers for comparisons and environment diffs: Markdown (site, PR comments), JSON (scripts), text (terminal).

All pure: they return strings or JSON-able dicts; only ``bench.compare.commands`` writes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from .envdiff import FieldDiff
from .evidence import floor_text
from .regress import Flag
from .result import NOT_STATED, Comparison, MetricComparison
from .verdict import fmt_figure

__all__ = [
    "comparison_notes",
    "context_heading",
    "context_lines",
    "interval_text",
    "render_comparison_json",
    "render_comparison_markdown",
    "render_comparison_text",
    "render_diff_json",
    "render_diff_markdown",
    "render_diff_text",
    "render_flags_markdown",
]


def context_heading(c: Comparison) -> str | None:
    """What the pair's context says, named before anything else: not comparable, or cross-context (forced)."""
    if not c.warnings:
        return None
    n = len(c.warnings)
    if c.cross_context:
        return f"Cross-context comparison (forced): the records differ in {n} context field(s) beyond the treatment"
    return f"Not comparable: the records differ in {n} context field(s) beyond the treatment, so there is no verdict"


def context_lines(c: Comparison) -> list[str]:
    """One line per differing context field with both values (baseline first)."""
    return [f"{w.field}: {w.values}" for w in c.warnings]


def interval_text(m: MetricComparison, *, no_interval: str = "none") -> str:
    """The interval of a ratio with what it shows (``evidence``), or why there is none."""
    if m.ratio.has_interval:
        assert m.ratio.lo is not None and m.ratio.hi is not None
        mark = {
            "decided": "",
            "no_difference": " (no difference shown)",
            "unresolved": " (not resolved)",
            "indicative": "",
        }[m.evidence]
        return f"{m.ratio.lo:.3f}–{m.ratio.hi:.3f}{mark}"
    return f"{no_interval} (indicative)" if m.ratio.value is not None else "—"


def comparison_notes(c: Comparison) -> list[str]:
    """The comparison's own notes, the levels only one side states, and how the intervals were made."""
    notes = list(c.notes)
    if c.only_in_a:
        notes.append(f"levels only {c.label_a} states: {', '.join(c.only_in_a)}")
    if c.only_in_b:
        notes.append(f"levels only {c.label_b} states: {', '.join(c.only_in_b)}")
    if c.estimate != "point":
        notes.append(
            f"intervals: percentile bootstrap, {c.n_boot} resamples, seed {c.seed} "
            "(requests within a run; runs, then requests, when a side has several runs; runs alone when they "
            "hold no per-request samples)"
        )
    notes.append(
        f"evidence: a side is faster only where the interval lies beyond the {floor_text(c.noise_floor)} noise floor; "
        f"inside it: no difference shown; no interval: indicative; fewer than {c.min_requests} requests per side "
        "(pooled over runs): no verdict"
    )
    return notes


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _value(v: Any) -> str:
    if v is None:
        return NOT_STATED
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def _ratio(m: MetricComparison) -> str:
    return "—" if m.ratio.value is None else f"{m.ratio.value:.3f}"


def _n(m: MetricComparison) -> str:
    def one(n: int | None, runs: int) -> str:
        text = "—" if n is None else str(n)
        return text + (f" ({runs} runs)" if runs > 1 else "")

    return f"{one(m.ratio.n_a, m.ratio.runs_a)} / {one(m.ratio.n_b, m.ratio.runs_b)}"


def _metric_label(m: MetricComparison) -> str:
    arrow = "" if m.neutral else " ↑" if m.higher_is_better else " ↓"
    return f"{m.label}{arrow}" if m.unit in m.label else f"{m.label} ({m.unit}){arrow}"


def _rows(c: Comparison) -> list[list[str]]:
    rows = []
    for lv in c.levels:
        level = lv.name + (" (failed)" if lv.failed else " (left out)" if lv.excluded else "")
        if not lv.metrics:
            rows.append([level, "—", "—", "—", "—", "—", "—"])
        for m in lv.metrics:
            rows.append(
                [
                    level,
                    _metric_label(m),
                    fmt_figure(m.a, m.approximate),
                    fmt_figure(m.b, m.approximate),
                    _ratio(m),
                    interval_text(m),
                    _n(m),
                ]
            )
    return rows


def _headers(c: Comparison) -> list[str]:
    return [
        "level",
        "metric",
        c.label_a,
        c.label_b,
        f"{c.label_b} / {c.label_a}",
        f"{c.confidence:.0%} interval",
        "requests",
    ]


def _sections(c: Comparison) -> list[tuple[str, list[str]]]:
    """The prose parts shared by the Markdown and text renderers: (heading, lines)."""
    out: list[tuple[str, list[str]]] = []
    if c.excluded:
        out.append(("Left out of the verdict", [f"{e.name or e.key}: {e.reason}" for e in c.excluded]))
    notes = [
        "↑ higher is better, ↓ lower is better; requests: what each figure rests on "
        f"({c.label_a} / {c.label_b}; — not stated)",
        *comparison_notes(c),
    ]
    if notes:
        out.append(("Notes", notes))
    if c.info_differences:
        out.append(
            (
                "Info differences (shown, not splitting)",
                [f"{d.field}: {_value(d.a)} vs {_value(d.b)}" for d in c.info_differences],
            )
        )
    out.append(
        (
            "Records",
            [
                f"{c.label_a}: {', '.join(c.ids_a)} (fingerprint {c.fingerprint_a})",
                f"{c.label_b}: {', '.join(c.ids_b)} (fingerprint {c.fingerprint_b})",
                f"treatment: {', '.join(c.treatment)}",
            ],
        )
    )
    return out


def _title(c: Comparison) -> str:
    return f"{c.label_b} compared with {c.label_a}" + (" (cross-context)" if c.cross_context else "")


def render_comparison_markdown(c: Comparison) -> str:
    lines = [f"**{_md(_title(c))}**", ""]
    heading = context_heading(c)
    if heading:
        lines += [f"**{_md(heading)}:**", "", *(f"- {_md(x)}" for x in context_lines(c)), ""]
    lines += [f"**Verdict.** {_md(c.verdict)}", ""]
    headers = _headers(c)
    lines.append("| " + " | ".join(_md(h) for h in headers) + " |")
    lines.append("|" + "---|" * len(headers))
    for row in _rows(c):
        lines.append("| " + " | ".join(_md(cell) for cell in row) + " |")
    if not c.levels:
        lines.append("| " + " | ".join(["no level is present in both"] + [""] * (len(headers) - 1)) + " |")
    for heading, items in _sections(c):
        lines += ["", f"**{heading}**", ""]
        lines += [f"- {_md(item)}" for item in items]
    return "\n".join(lines) + "\n"


def _metric_json(m: MetricComparison) -> dict[str, Any]:
    return {
        "metric": m.metric,
        "label": m.label,
        "unit": m.unit,
        "higher_is_better": None if m.neutral else m.higher_is_better,
        "baseline": m.a,
        "candidate": m.b,
        "approximate": m.approximate,
        "ratio": m.ratio.value,
        "lo": m.ratio.lo,
        "hi": m.ratio.hi,
        "resolved": m.ratio.resolved,
        "evidence": m.evidence,
        "n_baseline": m.ratio.n_a,
        "n_candidate": m.ratio.n_b,
        "runs_baseline": m.ratio.runs_a,
        "runs_candidate": m.ratio.runs_b,
        "note": m.note,
    }


def render_comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "baseline": {"label": c.label_a, "ids": list(c.ids_a), "fingerprint": c.fingerprint_a},
        "candidate": {"label": c.label_b, "ids": list(c.ids_b), "fingerprint": c.fingerprint_b},
        "experiment": c.experiment,
        "treatment": list(c.treatment),
        "comparable": c.comparable,
        "cross_context": c.cross_context,
        "context_differences": [{"field": w.field, "baseline": w.a, "candidate": w.b} for w in c.warnings],
        "verdict": c.verdict,
        "noise_floor": c.noise_floor,
        "min_requests": c.min_requests,
        "estimate": c.estimate,
        "confidence": c.confidence,
        "n_boot": c.n_boot,
        "seed": c.seed,
        "levels": [
            {
                "key": lv.key,
                "concurrency": lv.concurrency,
                "label": lv.label,
                "winner": {"a": "baseline", "b": "candidate"}.get(lv.winner, lv.winner),
                "excluded": lv.excluded,
                "failed": lv.failed,
                "metrics": [_metric_json(m) for m in lv.metrics],
            }
            for lv in c.levels
        ],
        "warnings": [{"field": w.field, "baseline": w.a, "candidate": w.b, "message": w.message} for w in c.warnings],
        "excluded": [{"key": e.key, "level": e.name, "reason": e.reason} for e in c.excluded],
        "only_in_baseline": list(c.only_in_a),
        "only_in_candidate": list(c.only_in_b),
        "notes": list(c.notes),
        "info_differences": [{"field": d.field, "baseline": d.a, "candidate": d.b} for d in c.info_differences],
    }


def _console_text(*renderables: Any, width: int) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False)
    for r in renderables:
        console.print(r)
    return buf.getvalue()


def render_comparison_text(c: Comparison, *, width: int = 120) -> str:
    table = Table(*_headers(c), title=_title(c), show_lines=False)
    for row in _rows(c):
        table.add_row(*row)
    parts: list[Any] = []
    heading = context_heading(c)
    if heading:
        parts += [f"{heading}:", *(f"  - {x}" for x in context_lines(c)), ""]
    parts += [table, f"Verdict: {c.verdict}"]
    for heading, items in _sections(c):
        parts.append(f"\n{heading}:")
        parts += [f"  - {item}" for item in items]
    return _console_text(*parts, width=width)


def _claimed(flag: bool, *, md: bool = False) -> str:
    """The mark of a value only the run config states (the server did not report it)."""
    return "" if not flag else " *(claimed)*" if md else " (claimed)"


def render_diff_markdown(rows: Sequence[FieldDiff], label_a: str = "a", label_b: str = "b") -> str:
    if not rows:
        return "The two records do not differ in any field (levels, ids and timestamps aside).\n"
    lines = [f"| field | role | {_md(label_a)} | {_md(label_b)} |", "|---|---|---|---|"]
    for d in rows:
        a, b = _md(_value(d.a)) + _claimed(d.claimed_a, md=True), _md(_value(d.b)) + _claimed(d.claimed_b, md=True)
        lines.append(f"| `{_md(d.field)}` | {d.role} | {a} | {b} |")
    return "\n".join(lines) + "\n"


def render_diff_json(rows: Sequence[FieldDiff]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in rows:
        row: dict[str, Any] = {"field": d.field, "role": d.role, "a": d.a, "b": d.b}
        row.update({k: True for k, v in (("claimed_a", d.claimed_a), ("claimed_b", d.claimed_b)) if v})
        out.append(row)
    return out


def render_diff_text(rows: Sequence[FieldDiff], label_a: str = "a", label_b: str = "b", *, width: int = 120) -> str:
    if not rows:
        return "The two records do not differ in any field (levels, ids and timestamps aside).\n"
    table = Table("field", "role", label_a, label_b, title=f"{len(rows)} differing field(s)")
    for d in rows:
        table.add_row(d.field, d.role, _value(d.a) + _claimed(d.claimed_a), _value(d.b) + _claimed(d.claimed_b))
    return _console_text(table, width=width)


def render_flags_markdown(flags: Sequence[Flag]) -> str:
    """Regression flags of one configuration as a Markdown table (an empty list: no lasting change found)."""
    if not flags:
        return "No lasting change beyond the threshold.\n"
    lines = ["| record | metric | level | finding |", "|---|---|---|---|"]
    for f in flags:
        lines.append(
            f"| `{f.record_id}` | {f.metric} | {_md(f.level)} | {f.kind.replace('_', ' ')}: {_md(f.message)} |"
        )
    return "\n".join(lines) + "\n"
