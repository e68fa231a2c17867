"""The figures the site tables and charts can show, by name: which field of a level, which statistic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bench.record.model import Level, Metric

__all__ = ["METRICS", "MetricSpec", "metric_spec"]

# Per-level speculative figures (``Level.speculative``): two different figures, never converted into each other.
SPECULATIVE_FIELDS = ("accept_length", "acceptance_rate")


@dataclass(frozen=True)
class MetricSpec:
    key: str
    field: str  # attribute of Level (or "accept_length" / "acceptance_rate", read from Level.speculative)
    stat: str | None  # None: the metric's headline figure (value, else mean, else p50)
    label: str
    unit: str
    better: Literal["higher", "lower"]

    def metric(self, level: Level) -> Metric | None:
        if self.field in SPECULATIVE_FIELDS:
            m = getattr(level.speculative, self.field) if level.speculative else None
            return m if isinstance(m, Metric) else None
        m = getattr(level, self.field)
        return m if isinstance(m, Metric) else None

    def figure(self, level: Level) -> tuple[float, bool] | None:
        """(value, approximate) or None when the level does not state it."""
        m = self.metric(level)
        if m is None:
            return None
        if self.stat is None:
            return m.headline(), m.approximate
        v = getattr(m, self.stat)
        return (float(v), m.approximate) if v is not None else None

    @property
    def title(self) -> str:
        return f"{self.label} ({self.unit})"


METRICS: dict[str, MetricSpec] = {
    m.key: m
    for m in (
        MetricSpec("output_throughput", "output_throughput", None, "Output throughput", "tok/s", "higher"),
        MetricSpec("total_throughput", "total_throughput", None, "Total throughput", "tok/s", "higher"),
        MetricSpec("request_throughput", "request_throughput", None, "Request throughput", "req/s", "higher"),
        MetricSpec("per_request_tok_s", "per_request_tok_s", None, "Per-request tok/s", "tok/s", "higher"),
        MetricSpec(
            "per_request_tok_s_e2e", "per_request_tok_s_e2e", None, "Per-request tok/s incl. TTFT", "tok/s", "higher"
        ),
        MetricSpec("ttft_p50", "ttft_ms", "p50", "TTFT p50", "ms", "lower"),
        MetricSpec("ttft_p99", "ttft_ms", "p99", "TTFT p99", "ms", "lower"),
        MetricSpec("tpot_p50", "tpot_ms", "p50", "TPOT p50", "ms", "lower"),
        MetricSpec("tpot_p99", "tpot_ms", "p99", "TPOT p99", "ms", "lower"),
        MetricSpec("itl_p50", "itl_ms", "p50", "ITL p50", "ms", "lower"),
        MetricSpec("e2e_p50", "e2e_ms", "p50", "E2E latency p50", "ms", "lower"),
        MetricSpec("e2e_p99", "e2e_ms", "p99", "E2E latency p99", "ms", "lower"),
        MetricSpec("accept_length", "accept_length", None, "Accept length", "tokens/step", "higher"),
        MetricSpec("acceptance_rate", "acceptance_rate", None, "Acceptance rate", "accepted / drafted", "higher"),
    )
}


def metric_spec(key: str) -> MetricSpec:
    try:
        return METRICS[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r}; known: {', '.join(METRICS)}") from None
