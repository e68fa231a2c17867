"""The candidate-vs-baseline comparison table: two records in, Markdown out.

Deliberately simple: one row per (level, figure) that either record states, the two figures and
their ratio. Comparability checks and confidence intervals belong to a later layer that can feed
the same table.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.record.model import Level, Record

from .escape import md_text
from .fmt import APPROX, fmt_number, fmt_ratio
from .levels import level_name, level_order
from .metrics import COMPARE_METRICS, MetricSpec, metric_spec
from .tables import md_table

__all__ = ["comparison_rows", "comparison_table"]


def _cell(fig: tuple[float, bool] | None) -> str:
    if fig is None:
        return "—"
    value, approx = fig
    return (APPROX if approx else "") + fmt_number(value)


def comparison_rows(
    baseline: Record, candidate: Record, metrics: Sequence[MetricSpec]
) -> list[tuple[Level, MetricSpec, tuple[float, bool] | None, tuple[float, bool] | None]]:
    """(level, metric, baseline figure, candidate figure) for every figure either record states."""
    base = {lv.key: lv for lv in baseline.levels}
    cand = {lv.key: lv for lv in candidate.levels}
    levels = sorted({**cand, **base}.values(), key=level_order)
    rows = []
    for level in levels:
        b, c = base.get(level.key), cand.get(level.key)
        for m in metrics:
            fb = m.figure(b) if b else None
            fc = m.figure(c) if c else None
            if fb is not None or fc is not None:
                rows.append((level, m, fb, fc))
    return rows


def comparison_table(baseline: Record, candidate: Record, metrics: Sequence[MetricSpec] | None = None) -> str:
    specs = list(metrics) if metrics is not None else [metric_spec(k) for k in COMPARE_METRICS]
    b_name, c_name = md_text(baseline.variant), md_text(candidate.variant)
    header = ["Level", "Figure", "Better", b_name, c_name, f"{c_name} / {b_name}"]
    rows = []
    for level, m, fb, fc in comparison_rows(baseline, candidate, specs):
        ratio = fmt_ratio(
            fc[0] if fc else None, fb[0] if fb else None, approximate=bool((fb and fb[1]) or (fc and fc[1]))
        )
        rows.append([md_text(level_name(level)), md_text(m.title), m.better, _cell(fb), _cell(fc), ratio])
    if not rows:
        return "*Neither record states a figure this table compares.*"
    return md_table(header, rows, align="lllrrr")
