"""The compared metrics and how each is read from a level: per-request samples first, the stated figure else.

Per-request values are computed from ``Level.samples`` with the formulas of ``shared/MEASUREMENT.md``:

* per-request tok/s = output_tokens / (E2E − TTFT), mean over requests;
* TPOT = (E2E − TTFT) / (output_tokens − 1), mean over requests with more than one token;
* TTFT: mean over requests;
* total throughput = Σ (input + output tokens) / level duration; output throughput = Σ output tokens / duration.

A request whose token count is unknown is left out of the means; a throughput needs every count.

Speculative decoding has two figures, compared only like with like (``LevelSpeculative``): the acceptance
rate (accepted / proposed draft tokens, 0..1) with the acceptance rate, the accept length (output tokens per
verify step) with the accept length. Neither is ever converted into the other; a side that states only the
other figure is named (``MetricSpec.counterpart``). They are level-wide sums, so they have no per-request
samples: an interval needs repeated runs.

To compare one more figure, add a ``MetricSpec`` to ``METRICS``: ``stated`` reads the level's figure (a
``Metric``), ``per_request`` its per-request values from ``Level.samples`` when it has any.

The cache-hit share (Σ cached prompt tokens ÷ Σ prompt tokens, ``Level.prefix_cache``) is compared too, as a
*neutral* figure: it describes what the workload let the server reuse, so no side "leads" on it and no
regression is flagged on it, but a speed difference between two records with different shares is not the
engines' alone. It is a share of sums, bootstrapped as a ``rate`` whose "duration" is the level's Σ prompt
tokens and whose per-request "times" are the prompt tokens: a resample's share is then exactly
Σ cached[idx] ÷ Σ prompt[idx].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.record.model import Level, Metric, PrefixCache, Samples

from .bootstrap import Kind, RunValues

__all__ = ["METRICS", "SPEED_METRICS", "MetricSpec", "metric_by_name", "run_values", "stated_metric"]


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


def _level_field(name: str) -> Callable[[Level], Metric | None]:
    def read(level: Level) -> Metric | None:
        m = getattr(level, name, None)
        return m if isinstance(m, Metric) else None

    return read


def _speculative(name: str) -> Callable[[Level], Metric | None]:
    def read(level: Level) -> Metric | None:
        m = getattr(level.speculative, name, None) if level.speculative is not None else None
        return m if isinstance(m, Metric) else None

    return read


def _cache_pairs(s: Samples) -> list[tuple[float, float]]:
    """(cached, prompt tokens) of the requests that report both, with a positive prompt."""
    if not s.cached_tokens or len(s.cached_tokens) != len(s.input_tokens):
        return []
    return [
        (float(c), float(i))
        for c, i in zip(s.cached_tokens, s.input_tokens, strict=True)
        if c is not None and i is not None and 0 <= c <= i and i > 0
    ]


def _cached_tokens(s: Samples) -> list[float] | None:
    return [c for c, _ in _cache_pairs(s)] or None


def _cache_prompt_tokens(s: Samples) -> list[float] | None:
    return [i for _, i in _cache_pairs(s)] or None


def _stated_cache_hit_share(level: Level) -> Metric | None:
    pc: PrefixCache | None = level.prefix_cache
    if pc is None:
        return None
    return Metric(unit="share", formula="sum_cached_prompt_tokens/sum_prompt_tokens", value=pc.hit_share, n=pc.requests)


@dataclass(frozen=True)
class MetricSpec:
    """One compared figure. ``stated`` reads the figure a level states; ``per_request`` (None: the figure has no
    per-request values) its values from ``Level.samples``; ``counterpart`` names a related figure that is NOT the
    same quantity (said so when one side states only that one)."""

    name: str
    label: str
    unit: str
    higher_is_better: bool
    kind: Kind
    per_request: Callable[[Samples], list[float] | None] | None
    stated: Callable[[Level], Metric | None]
    counterpart: str | None = None
    share_of: Callable[[Samples], list[float] | None] | None = None  # denominators: a share of sums
    neutral: bool = False  # a workload figure: shown, never a leader, never a regression


def _spec(
    name: str, label: str, unit: str, higher: bool, kind: Kind, per_request: Callable[[Samples], list[float] | None]
) -> MetricSpec:
    return MetricSpec(name, label, unit, higher, kind, per_request, _level_field(name))


METRICS: tuple[MetricSpec, ...] = (
    _spec("per_request_tok_s", "per-request tok/s", "tok/s", True, "mean", _per_request_tok_s),
    _spec("total_throughput", "total throughput", "tok/s", True, "rate", _total_tokens),
    _spec("output_throughput", "output throughput", "tok/s", True, "rate", _output_tokens),
    _spec("ttft_ms", "TTFT", "ms", False, "mean", _ttft),
    _spec("tpot_ms", "TPOT", "ms", False, "mean", _tpot),
    MetricSpec(
        "acceptance_rate",
        "acceptance rate",
        "accepted / drafted",
        True,
        "mean",
        None,
        _speculative("acceptance_rate"),
        counterpart="accept_length",
    ),
    MetricSpec(
        "accept_length",
        "accept length",
        "tokens/step",
        True,
        "mean",
        None,
        _speculative("accept_length"),
        counterpart="acceptance_rate",
    ),
    MetricSpec(
        "cache_hit_share",
        "cache-hit share",
        "cached/prompt tokens",
        False,
        "rate",
        _cached_tokens,
        _stated_cache_hit_share,
        share_of=_cache_prompt_tokens,
        neutral=True,
    ),
)
# The metrics that decide which side is faster at a level (latencies and speculative figures are shown, not voted).
SPEED_METRICS: tuple[str, ...] = ("per_request_tok_s", "total_throughput", "output_throughput")


def metric_by_name(name: str) -> MetricSpec:
    spec = next((m for m in METRICS if m.name == name), None)
    if spec is None:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(m.name for m in METRICS)}")
    return spec


def run_values(spec: MetricSpec, level: Level) -> RunValues | None:
    """The level's per-request values for ``spec``; None when the level has no usable samples for it."""
    if spec.per_request is None or level.samples is None or not level.samples.ttft_ms:
        return None
    values = spec.per_request(level.samples)
    if not values:
        return None
    if spec.share_of is not None:
        shares_of = spec.share_of(level.samples)
        if not shares_of or len(shares_of) != len(values) or sum(shares_of) <= 0:
            return None
        return RunValues(values=values, kind="rate", duration_s=sum(shares_of), times=shares_of)
    if spec.kind == "mean":
        return RunValues(values=values, kind="mean")
    if not level.duration_s:
        return None
    times = list(level.samples.e2e_ms)
    return RunValues(values=values, kind="rate", duration_s=level.duration_s, times=times if sum(times) > 0 else None)


def stated_metric(spec: MetricSpec, level: Level) -> Metric | None:
    """The figure the record states for ``spec`` at this level (for records without samples)."""
    return spec.stated(level)
