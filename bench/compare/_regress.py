"""Regressions: each configuration's history, and the rule that flags a lasting change (pure).

A *configuration* is a fingerprint (``context.fingerprint``) plus a variant; ``history`` keys it as
``"<variant>@<fingerprint>"`` and orders its records by time (``provenance.measured_at``, else ``created_at``).

The rule, per metric and level (headline figures, ``Metric.headline()``):

* the *window baseline* for record *i* is the median of the previous ``window`` records that state the figure;
* with fewer than ``min_history`` such records the answer is ``insufficient_data`` (never "fine");
* record *i* *deviates* when its figure / window baseline moves beyond ``1 ± ratio_threshold``;
* a change is flagged (``regression`` or ``improvement``, by whether higher is better for the metric) when
  record *i* and the next record *i + 1* both deviate in the same direction from record *i*'s window baseline,
  and record *i − 1* did not already (one flag per step, at the record where it starts);
* a single outlier is not flagged; a deviating newest record, with no successor yet, is ``unconfirmed``.

A failed level (``Level.failure``) states no figure here: it never enters a series.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bench.figures import COMPARED, Figure, figure
from bench.level_order import level_sort_key
from bench.record.model import Level, Record
from bench.settings import RegressionThresholds

from ._context import fingerprint

__all__ = [
    "Flag",
    "FlagKind",
    "config_key",
    "flags",
    "history",
    "recorded_at",
    "regression_flags",
    "series_figure",
]

FlagKind = Literal["regression", "improvement", "unconfirmed", "insufficient_data"]
Direction = Literal["up", "down"]


@dataclass(frozen=True)
class Flag:
    kind: FlagKind
    metric: str
    level: str
    record_id: str
    message: str
    value: float | None = None
    window_median: float | None = None
    ratio: float | None = None
    confirmed_by: str | None = None


def recorded_at(record: Record) -> datetime:
    return record.provenance.measured_at or record.created_at


def config_key(record: Record) -> str:
    return f"{record.variant}@{fingerprint(record)}"


def history(
    records: Iterable[Record], *, fingerprint_of: Callable[[Record], str] = fingerprint
) -> dict[str, list[Record]]:
    """Records grouped by configuration (``config_key``; ``fingerprint_of``: the fingerprints, e.g. memoised), each
    list ordered by time, then id."""
    out: dict[str, list[Record]] = {}
    for r in records:
        out.setdefault(f"{r.variant}@{fingerprint_of(r)}", []).append(r)
    return {k: sorted(v, key=lambda r: (recorded_at(r), r.id)) for k, v in sorted(out.items())}


def series_figure(record: Record, spec: Figure, level_key: str) -> float | None:
    """The figure ``spec`` at the record's level ``level_key``; None when not stated or failed."""
    return _figure_at(spec, next((x for x in record.levels if x.key == level_key and not x.failed), None))


def _figure_at(spec: Figure, level: Level | None) -> float | None:
    """The figure ``spec`` at ``level`` (None: no such level, or the level does not state it)."""
    value = spec.value(level) if level is not None else None
    return value[0] if value is not None else None


def _series(records: Sequence[Record]) -> dict[tuple[str, str], list[float | None]]:
    """(figure, level key) -> the figure of each record (None where not stated or failed), for the compared,
    non-neutral figures."""
    keys: dict[tuple[str, str], tuple[tuple[int, int, str], int]] = {}
    # each record's first level of each key that did not fail: what series_figure finds, looked up once per record
    # (scanning the levels for every figure and level made this most of the flags' time)
    found: list[dict[str, Level]] = []
    for r in records:
        mine: dict[str, Level] = {}
        for lv in r.levels:
            if lv.failed:
                continue
            mine.setdefault(lv.key, lv)
            for i, spec in enumerate(COMPARED):
                if not spec.neutral and spec.metric(lv) is not None:
                    keys.setdefault((spec.key, lv.key), (level_sort_key(lv), i))
        found.append(mine)
    out: dict[tuple[str, str], list[float | None]] = {}
    for key in sorted(keys, key=lambda k: keys[k]):
        spec, level_key = figure(key[0]), key[1]
        out[key] = [_figure_at(spec, mine.get(level_key)) for mine in found]
    return out


def _direction(value: float, median: float, t: float) -> Direction | None:
    if median == 0:
        return None
    ratio = value / median
    return "up" if ratio > 1 + t else "down" if ratio < 1 - t else None


def _kind(direction: Direction, higher_is_better: bool) -> FlagKind:
    return "improvement" if (direction == "up") == higher_is_better else "regression"


def flags(history_list: Sequence[Record], thresholds: RegressionThresholds) -> list[Flag]:
    """Flags for one configuration's time-ordered records (see the module docstring for the rule)."""
    t = thresholds.ratio_threshold
    out: list[Flag] = []
    for (metric, level), values in _series(history_list).items():
        stated = [(i, v) for i, v in enumerate(values) if v is not None]
        prev_dir: Direction | None = None
        for pos, (i, v) in enumerate(stated):
            window = [x for _, x in stated[max(0, pos - thresholds.window) : pos]]
            rid = history_list[i].id
            if len(window) < thresholds.min_history:
                if pos == len(stated) - 1:
                    out.append(
                        Flag(
                            "insufficient_data",
                            metric,
                            level,
                            rid,
                            f"{len(window)} earlier comparable record(s) state {metric} at level {level}; "
                            f"{thresholds.min_history} needed",
                            value=v,
                        )
                    )
                prev_dir = None
                continue
            median = statistics.median(window)
            d = _direction(v, median, t)
            if d is None:
                prev_dir = None
                continue
            ratio = v / median
            if pos == len(stated) - 1:
                if prev_dir != d:
                    out.append(
                        Flag(
                            "unconfirmed",
                            metric,
                            level,
                            rid,
                            f"{metric} at level {level} moved {ratio:.2f}× the window median; "
                            "one more record is needed to confirm it",
                            v,
                            median,
                            ratio,
                        )
                    )
                continue
            j, nxt = stated[pos + 1]
            if prev_dir != d and _direction(nxt, median, t) == d:
                kind = _kind(d, figure(metric).higher_is_better)
                out.append(
                    Flag(
                        kind,
                        metric,
                        level,
                        rid,
                        f"{metric} at level {level} is {ratio:.2f}× the median of the previous "
                        f"{len(window)} record(s) ({median:.4g} -> {v:.4g}), confirmed by {history_list[j].id}",
                        v,
                        median,
                        ratio,
                        history_list[j].id,
                    )
                )
            prev_dir = d
    return out


def regression_flags(
    records: Iterable[Record], thresholds: RegressionThresholds | None = None
) -> dict[str, list[Flag]]:
    """``flags`` for every configuration in ``records``, keyed like ``history``."""
    th = thresholds or RegressionThresholds()
    return {key: flags(hist, th) for key, hist in history(records).items()}
