"""The compared metrics and how each is read from a level: per-request samples first, the stated figure else.

Per-request values are computed from ``Level.samples`` with the formulas of ``shared/MEASUREMENT.md``:

* per-request tok/s = output_tokens / (E2E − TTFT), mean over requests;
* TPOT = (E2E − TTFT) / (output_tokens − 1), mean over requests with more than one token;
* TTFT: mean over requests;
* total throughput = Σ (input + output tokens) / level duration; output throughput = Σ output tokens / duration.

A request whose token count is unknown is left out of the means; a throughput needs every count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.record.model import Level, Metric, Samples

from .bootstrap import Kind, RunValues

__all__ = ["METRICS", "SPEED_METRICS", "MetricSpec", "run_values", "stated_metric"]


def _per_request_tok_s(s: Samples) -> list[float] | None:
    out = []
    for ttft, e2e, n in zip(s.ttft_ms, s.e2e_ms, s.output_tokens, strict=True):
        if n is not None and e2e > ttft:
            out.append(n / ((e2e - ttft) / 1000.0))
    return out


def _tpot(s: Samples) -> list[float] | None:
    return [
        (e2e - ttft) / (n - 1)
        for ttft, e2e, n in zip(s.ttft_ms, s.e2e_ms, s.output_tokens, strict=True)
        if n is not None and n > 1
    ]


def _ttft(s: Samples) -> list[float] | None:
    return list(s.ttft_ms)


def _total_tokens(s: Samples) -> list[float] | None:
    if len(s.input_tokens) != len(s.output_tokens):
        return None
    pairs = list(zip(s.input_tokens, s.output_tokens, strict=True))
    if any(i is None or o is None for i, o in pairs):
        return None
    return [float(i) + float(o) for i, o in pairs if i is not None and o is not None]


def _output_tokens(s: Samples) -> list[float] | None:
    if any(n is None for n in s.output_tokens):
        return None
    return [float(n) for n in s.output_tokens if n is not None]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    unit: str
    higher_is_better: bool
    kind: Kind
    per_request: Callable[[Samples], list[float] | None]


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("per_request_tok_s", "per-request tok/s", "tok/s", True, "mean", _per_request_tok_s),
    MetricSpec("total_throughput", "total throughput", "tok/s", True, "rate", _total_tokens),
    MetricSpec("output_throughput", "output throughput", "tok/s", True, "rate", _output_tokens),
    MetricSpec("ttft_ms", "TTFT", "ms", False, "mean", _ttft),
    MetricSpec("tpot_ms", "TPOT", "ms", False, "mean", _tpot),
)
# The metrics that decide which side is faster at a level (latencies are shown, not voted).
SPEED_METRICS: tuple[str, ...] = ("per_request_tok_s", "total_throughput", "output_throughput")


def run_values(spec: MetricSpec, level: Level) -> RunValues | None:
    """The level's per-request values for ``spec``; None when the level has no usable samples for it."""
    if level.samples is None or not level.samples.ttft_ms:
        return None
    values = spec.per_request(level.samples)
    if not values:
        return None
    if spec.kind == "mean":
        return RunValues(values=values, kind="mean")
    if not level.duration_s:
        return None
    times = list(level.samples.e2e_ms)
    return RunValues(values=values, kind="rate", duration_s=level.duration_s, times=times if sum(times) > 0 else None)


def stated_metric(spec: MetricSpec, level: Level) -> Metric | None:
    """The figure the record states for ``spec`` at this level (for records without samples)."""
    metric = getattr(level, spec.name)
    return metric if isinstance(metric, Metric) else None
