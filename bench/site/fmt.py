"""Formatting figures for people: units, approximations ("≈"), and "not stated" for missing facts."""

from __future__ import annotations

import math
from datetime import date, datetime

from bench.record.model import Metric

__all__ = [
    "APPROX",
    "NOT_STATED",
    "fmt_bool",
    "fmt_date",
    "fmt_metric",
    "fmt_number",
    "fmt_stat",
]

NOT_STATED = "not stated"
APPROX = "≈"
DASH = "—"


def fmt_number(value: float | int | None, *, missing: str = DASH) -> str:
    """A figure with a precision that suits its size: 1234, 92.7, 3.42, 0.0123."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    v = float(value)
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}".rstrip("0").rstrip(".") if v != round(v) else f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    return f"{v:.3g}"


def fmt_stat(metric: Metric | None, stat: str, *, missing: str = DASH) -> str:
    """One statistic of a metric (``value``, ``mean``, ``p50``...), with "≈" when the source says "about"."""
    if metric is None:
        return missing
    v = getattr(metric, stat)
    if v is None:
        return missing
    return (APPROX if metric.approximate else "") + fmt_number(v)


def fmt_metric(metric: Metric | None, *, missing: str = DASH, unit: bool = False) -> str:
    """The headline figure of a metric (value, else mean, else median)."""
    if metric is None:
        return missing
    text = (APPROX if metric.approximate else "") + fmt_number(metric.headline())
    return f"{text} {metric.unit}" if unit else text


def fmt_bool(value: bool | None) -> str:
    if value is None:
        return NOT_STATED
    return "yes" if value else "no"


def fmt_date(value: datetime | date | None) -> str:
    if value is None:
        return NOT_STATED
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat()
