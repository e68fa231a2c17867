"""A comparison as rows (pure): one row per compared level and figure, the data behind the long table of every
renderer (Markdown, terminal) and behind the CSV download (:func:`comparison_frame`), so they cannot disagree; and
the plain-text cells the renderers escape for their medium.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from bench.figures import Figure, figure, format_figure

from ._result import NOT_STATED, Comparison, LevelComparison, MetricComparison

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ComparisonRow",
    "comparison_frame",
    "comparison_rows",
    "figure_heading",
    "interval_text",
    "level_cell",
    "long_cells",
    "long_header",
    "ratio_text",
    "requests_text",
    "shown_value",
    "value_text",
]

EVIDENCE_MARK = {"decided": "", "no_difference": " (no difference shown)", "unresolved": " (not resolved)"}


@dataclass(frozen=True)
class ComparisonRow:
    """One compared figure at one level (``figure`` is empty for a failed level, where no figure is compared)."""

    level: str
    concurrency: int | None
    level_label: str | None
    figure: str
    label: str
    unit: str
    better: str | None  # "higher", "lower", None: neutral
    baseline: float | None
    candidate: float | None
    approximate: bool
    ratio: float | None
    lo: float | None
    hi: float | None
    evidence: str | None
    n_baseline: int | None
    n_candidate: int | None
    runs_baseline: int
    runs_candidate: int
    excluded: str | None
    failed: bool
    note: str | None


def _row(lv: LevelComparison, m: MetricComparison | None) -> ComparisonRow:
    f = m.figure if m is not None else None
    return ComparisonRow(
        level=lv.name,
        concurrency=lv.concurrency,
        level_label=lv.label,
        figure=f.key if f else "",
        label=f.label if f else "",
        unit=f.unit if f else "",
        better=f.better if f else None,
        baseline=m.a if m else None,
        candidate=m.b if m else None,
        approximate=m.approximate if m else False,
        ratio=m.ratio.value if m else None,
        lo=m.ratio.lo if m else None,
        hi=m.ratio.hi if m else None,
        evidence=m.evidence if m else None,
        n_baseline=m.ratio.n_a if m else None,
        n_candidate=m.ratio.n_b if m else None,
        runs_baseline=m.ratio.runs_a if m else 0,
        runs_candidate=m.ratio.runs_b if m else 0,
        excluded=lv.excluded,
        failed=lv.failed,
        note=m.note if m else None,
    )


def comparison_rows(c: Comparison, figures: Sequence[str] | None = None) -> list[ComparisonRow]:
    """Every compared figure of every level (``figures``: only these keys), in level order; a failed level is one
    row with no figure."""
    rows = []
    for lv in c.levels:
        if lv.failed:
            rows.append(_row(lv, None))
        rows += [_row(lv, m) for m in lv.metrics if figures is None or m.metric in figures]
    return rows


def comparison_frame(c: Comparison) -> pd.DataFrame:
    """:func:`comparison_rows` as a pandas DataFrame (the comparison's CSV download)."""
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in comparison_rows(c)], columns=list(ComparisonRow.__dataclass_fields__))


# ---------------------------------------------------------------- plain-text cells


def figure_heading(f: Figure | ComparisonRow) -> str:
    """``per-request tok/s ↑``, ``TTFT (ms) ↓``: the label, its unit when the label does not say it, the direction."""
    if isinstance(f, ComparisonRow):
        f = figure(f.figure)
    arrow = "" if f.better is None else " ↑" if f.better == "higher" else " ↓"
    return f.title + arrow


def value_text(value: float | None, approximate: bool) -> str:
    return format_figure(value, approximate=approximate, missing=NOT_STATED)


def ratio_text(r: ComparisonRow) -> str:
    return "—" if r.ratio is None else ("≈" if r.approximate else "") + f"{r.ratio:.2f}×"


def interval_text(r: ComparisonRow) -> str:
    """The interval of a ratio with what it shows (``evidence``), or why there is none."""
    if r.lo is not None and r.hi is not None:
        return f"{r.lo:.2f}–{r.hi:.2f}" + EVIDENCE_MARK.get(r.evidence or "", "")
    if r.ratio is None:
        return r.note or "—"
    return "none (indicative)"


def requests_text(r: ComparisonRow) -> str:
    """What each side's figure rests on: ``1,200 / 960 (3 runs)``; ``—`` when not stated."""

    def one(n: int | None, runs: int) -> str:
        return ("—" if n is None else f"{n:,}") + (f" ({runs} runs)" if runs > 1 else "")

    return f"{one(r.n_baseline, r.runs_baseline)} / {one(r.n_candidate, r.runs_candidate)}"


def level_cell(r: ComparisonRow | LevelComparison) -> str:
    """The level's name, marked when it failed or is left out of the verdict."""
    name = r.level if isinstance(r, ComparisonRow) else r.name
    return name + (" (failed)" if r.failed else " (left out)" if r.excluded else "")


def shown_value(v: Any) -> str:
    """A record value in a cell or a line: text as it is, anything else as JSON, ``not stated`` for None."""
    return NOT_STATED if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


FAILED_ROW = "failed: no figure compared"


def long_header(c: Comparison) -> list[str]:
    """The long table's columns (plain text)."""
    ratio, interval = f"{c.label_b} / {c.label_a}", f"{c.confidence:.0%} interval"
    return ["Level", "Figure", c.label_a, c.label_b, ratio, interval, "Requests"]


def long_cells(r: ComparisonRow) -> list[str]:
    """One row of the long table as plain-text cells (a failed level: its name and :data:`FAILED_ROW`)."""
    if not r.figure:
        return [level_cell(r), FAILED_ROW, "—", "—", "—", "—", "—"]
    return [
        level_cell(r),
        figure_heading(r),
        value_text(r.baseline, r.approximate),
        value_text(r.candidate, r.approximate),
        ratio_text(r),
        interval_text(r),
        requests_text(r),
    ]
