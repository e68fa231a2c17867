"""Formatting for people on the site: one statistic of a metric, a metric's headline, a date; "not stated" for a
missing fact. Numbers themselves are formatted by :func:`bench.figures.format_figure`, the project's one rule."""

from __future__ import annotations

from datetime import date, datetime

from bench.figures import format_figure
from bench.record.model import Metric

__all__ = ["DASH", "NOT_STATED", "fmt_date", "fmt_metric", "fmt_stat"]

NOT_STATED = "not stated"
DASH = "—"


def fmt_stat(metric: Metric | None, stat: str, *, missing: str = DASH) -> str:
    """One statistic of a metric (``value``, ``mean``, ``p50``...), with "≈" when the source says "about"."""
    v = getattr(metric, stat) if metric is not None else None
    return format_figure(v, approximate=metric is not None and metric.approximate, missing=missing)


def fmt_metric(metric: Metric | None, *, missing: str = DASH, unit: bool = False) -> str:
    """The headline figure of a metric (value, else mean, else median)."""
    if metric is None:
        return missing
    text = format_figure(metric.headline(), approximate=metric.approximate)
    return f"{text} {metric.unit}" if unit else text


def fmt_date(value: datetime | date | None) -> str:
    if value is None:
        return NOT_STATED
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat()
