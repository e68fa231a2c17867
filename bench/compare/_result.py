"""What a comparison produces: plain frozen dataclasses, rendered by the renderers of ``bench.compare``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from bench.figures import Figure
from bench.level_order import level_name

from ._envdiff import FieldDiff

__all__ = [
    "Comparison",
    "ContextWarning",
    "Evidence",
    "ExcludedLevel",
    "LevelComparison",
    "MetricComparison",
    "Ratio",
    "Side",
    "Winner",
]

Side = Literal["a", "b"]
Winner = Literal["a", "b", "mixed", "unresolved", "no_difference", "indicative", "none"]
# What one ratio shows (see ``bench.compare.evidence``): ``decided``: its interval lies entirely beyond the noise
# floor; ``no_difference``: its interval lies inside it; ``unresolved``: neither; ``indicative``: no interval.
Evidence = Literal["decided", "no_difference", "unresolved", "indicative"]
NOT_STATED = "not stated"


@dataclass(frozen=True)
class Ratio:
    """candidate / baseline. ``lo``/``hi`` are the confidence interval, ``None`` for a point estimate.

    ``n_a``/``n_b``: the requests each side's figure rests on (``None`` when unknown), ``runs_a``/``runs_b``
    the runs (records) it averages.
    """

    value: float | None
    lo: float | None
    hi: float | None
    n_a: int | None
    n_b: int | None
    runs_a: int = 1
    runs_b: int = 1

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None

    @property
    def resolved(self) -> bool:
        """The interval excludes 1 (a point estimate is never resolved)."""
        return self.lo is not None and self.hi is not None and (self.lo > 1.0 or self.hi < 1.0)


@dataclass(frozen=True)
class MetricComparison:
    """One figure (``bench.figures``) at one level: baseline ``a``, candidate ``b``, their ratio and what it shows."""

    figure: Figure
    a: float | None
    b: float | None
    ratio: Ratio
    approximate: bool = False
    note: str | None = None
    evidence: Evidence = "indicative"

    @property
    def metric(self) -> str:
        return self.figure.key

    @property
    def label(self) -> str:
        return self.figure.label

    @property
    def unit(self) -> str:
        return self.figure.unit

    @property
    def higher_is_better(self) -> bool:
        return self.figure.higher_is_better

    @property
    def neutral(self) -> bool:
        """A workload figure (cache-hit share): no side is better."""
        return self.figure.neutral

    @property
    def leader(self) -> Side | None:
        """The side with the better figure (None when a side lacks it, they are equal, or the figure is neutral).

        By the point estimate: only ``evidence == "decided"`` makes it a finding."""
        r = self.ratio.value
        if r is None or r == 1.0 or self.neutral:
            return None
        return "b" if (r > 1.0) == self.higher_is_better else "a"

    @property
    def decided(self) -> bool:
        """The interval lies entirely beyond the noise floor: the better side is shown."""
        return self.evidence == "decided" and self.leader is not None

    @property
    def unresolved(self) -> bool:
        """An interval exists, but neither beyond nor inside the noise floor: the data do not tell."""
        return self.evidence == "unresolved"


@dataclass(frozen=True)
class ExcludedLevel:
    """A level both sides state that gets no verdict; ``reason`` names the side(s) and why (failed, too few
    requests, flagged error rate)."""

    key: str
    reason: str
    name: str = ""


@dataclass(frozen=True)
class LevelComparison:
    key: str
    concurrency: int | None
    label: str | None
    metrics: tuple[MetricComparison, ...]
    winner: Winner
    excluded: str | None = None
    failed: bool = False  # a side's runs all failed at this level: no figure of it is compared

    @property
    def name(self) -> str:
        return level_name(self)

    def metric(self, name: str) -> MetricComparison | None:
        return next((m for m in self.metrics if m.metric == name), None)


def _show(v: Any) -> str:
    return NOT_STATED if v is None else repr(v) if isinstance(v, str) else str(v)


@dataclass(frozen=True)
class ContextWarning:
    """A context field that differs beyond the treatment."""

    field: str
    a: Any
    b: Any

    @property
    def values(self) -> str:
        """``'sglang' vs 'vllm'``: both values, for naming the field in a sentence."""
        return f"{_show(self.a)} vs {_show(self.b)}"

    @property
    def message(self) -> str:
        return f"context differs beyond the treatment: {self.field} is {self.values}"


@dataclass(frozen=True)
class Comparison:
    """Baseline (side ``a``) against candidate (side ``b``): rows per level, warnings, a computed verdict."""

    label_a: str
    label_b: str
    ids_a: tuple[str, ...]
    ids_b: tuple[str, ...]
    fingerprint_a: str
    fingerprint_b: str
    experiment: str | None
    treatment: tuple[str, ...]
    levels: tuple[LevelComparison, ...]
    warnings: tuple[ContextWarning, ...]
    verdict: str
    excluded: tuple[ExcludedLevel, ...]
    notes: tuple[str, ...] = ()
    info_differences: tuple[FieldDiff, ...] = ()
    confidence: float = 0.95
    n_boot: int = 2000
    seed: int = 0
    estimate: Literal["bootstrap", "point", "mixed"] = "point"
    only_in_a: tuple[str, ...] = field(default=())
    only_in_b: tuple[str, ...] = field(default=())
    cross_context: bool = False
    noise_floor: float = 0.05
    min_requests: int = 10

    @property
    def comparable(self) -> bool:
        """Same context apart from the declared treatment (``warnings`` names every other differing field)."""
        return not self.warnings

    @property
    def context_fields(self) -> tuple[str, ...]:
        """The differing context fields, in the order they are named."""
        return tuple(w.field for w in self.warnings)
