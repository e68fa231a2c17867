"""One load level of a record and its figures: metrics with their formula, token counts, samples, speculative
decoding, prefix cache, errors and the client's own load."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ._base import TEXT_LIMITS, Strict

__all__ = ["ClientLoad", "Level", "LevelErrors", "LevelSpeculative", "Metric", "PrefixCache", "Samples", "TokenCounts"]


class Metric(Strict):
    """A figure or a distribution of figures, with its unit, formula and sample count.

    ``value`` is a single figure whose statistic is the source's own (a throughput over a level,
    or a transcribed number whose statistic the source does not state). ``mean``/``p50``/... are a
    distribution over ``n`` samples.
    """

    unit: str
    formula: str
    value: float | None = None
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None
    stdev: float | None = None
    n: int | None = Field(default=None, ge=0, description="samples the figures rest on")
    approximate: bool = Field(default=False, description="the source gives the figure as approximate ('about')")
    note: str | None = Field(default=None, max_length=TEXT_LIMITS["note"])
    source: str | None = Field(
        default=None,
        max_length=TEXT_LIMITS["note"],
        description="where the inputs came from, e.g. 'meta_info.spec_verify_ct per request'",
    )

    @model_validator(mode="after")
    def _has_a_figure(self) -> Metric:
        if all(getattr(self, k) is None for k in ("value", "mean", "p50", "p90", "p99")):
            raise ValueError("a metric needs at least one of value, mean, p50, p90, p99")
        return self

    def headline(self) -> float:
        """The figure a table shows: the stated value, else the mean, else the median."""
        for key in ("value", "mean", "p50", "p90", "p99"):
            v = getattr(self, key)
            if v is not None:
                return float(v)
        raise AssertionError("unreachable: validated to hold a figure")


class TokenCounts(Strict):
    total: int | None = Field(default=None, ge=0)
    source: Literal["server_usage", "server_meta_info", "tokenizer", "test_server", "unknown"] = "unknown"


class Samples(Strict):
    """Per-request measurements of the successful requests of a level, in request order.

    Kept so that confidence intervals can be computed later (bootstrap over requests).
    """

    ttft_ms: list[float]
    e2e_ms: list[float]
    output_tokens: list[int | None]
    input_tokens: list[int | None] = Field(default_factory=list)
    cached_tokens: list[int | None] = Field(
        default_factory=list, description="prompt tokens the server served from its prefix cache, per request"
    )

    @model_validator(mode="after")
    def _same_length(self) -> Samples:
        n = len(self.ttft_ms)
        if len(self.e2e_ms) != n or len(self.output_tokens) != n:
            raise ValueError("ttft_ms, e2e_ms and output_tokens must have one entry per request")
        for name in ("input_tokens", "cached_tokens"):
            if getattr(self, name) and len(getattr(self, name)) != n:
                raise ValueError(f"{name} must be empty or have one entry per request")
        return self


class LevelSpeculative(Strict):
    """Speculative decoding figures for the requests of this level only (never a lifetime average).

    Two different figures, never converted into each other without their inputs:

    * ``acceptance_rate`` = accepted draft tokens / proposed draft tokens (``accepted_tokens / draft_tokens``),
      a fraction from 0 to 1;
    * ``accept_length`` = output tokens / verify steps (``output_tokens / verify_steps``), tokens per
      target-model forward pass, at least 1.
    """

    accept_length: Metric | None = None
    acceptance_rate: Metric | None = None
    draft_tokens: int | None = Field(default=None, ge=0, description="proposed draft tokens, summed over requests")
    accepted_tokens: int | None = Field(default=None, ge=0, description="accepted draft tokens, summed")
    verify_steps: int | None = Field(default=None, ge=0, description="target verify steps, summed")
    output_tokens: int | None = Field(default=None, ge=0, description="output tokens of the requests counted")
    requests: int | None = Field(default=None, ge=0, description="requests whose figures are summed")
    method: str | None = Field(
        default=None, max_length=TEXT_LIMITS["note"], description="how the figures were read, e.g. per-request timings"
    )
    missing: list[str] = Field(
        default_factory=list, description="figures this engine or API does not report, each with why"
    )


class PrefixCache(Strict):
    """Prompt tokens served from the server's prefix cache over the requests of a level."""

    cached_tokens: int = Field(ge=0, description="sum of cached prompt tokens over the requests that report it")
    input_tokens: int = Field(ge=0, description="sum of prompt tokens over the same requests")
    hit_share: float = Field(ge=0, le=1, description="cached_tokens / input_tokens")
    requests: int = Field(ge=0, description="requests that reported a cached-token count")
    source: str = Field(max_length=TEXT_LIMITS["note"], description="e.g. meta_info.cached_tokens")


class LevelErrors(Strict):
    by_kind: dict[str, int] = Field(default_factory=dict)
    examples: list[Annotated[str, Field(max_length=TEXT_LIMITS["error_example"])]] = Field(
        default_factory=list, max_length=TEXT_LIMITS["error_examples"]
    )
    error_rate: float | None = Field(default=None, ge=0, le=1)
    flagged: bool = Field(default=False, description="error rate above the run's threshold")


class ClientLoad(Strict):
    """What the benchmark client itself spent on a level (warm-up included): compare with its measured ceiling
    (``benchmarks/client_ceiling.py``) to tell whether the client, not the server, was the limit."""

    wall_s: float = Field(ge=0)
    cpu_s: float = Field(ge=0, description="CPU time of the client process(es) (all threads)")
    cpu_percent: float = Field(ge=0, description="cpu_s / wall_s x 100; 100 = one core saturated")
    token_events: int = Field(ge=0, description="token-bearing stream chunks received")
    token_events_per_s: float = Field(ge=0)
    processes: int | None = Field(
        default=None,
        ge=1,
        description="client processes that measured the level (the sharded client; None: one, before this field)",
    )
    event_loop: Literal["uvloop", "asyncio"] | None = Field(
        default=None,
        description="the event loop the client ran on (bench.runner.event_loop; None: asyncio's, before this field)",
    )


class Level(Strict):
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description="concurrent requests; None when the source does not state it (e.g. 'at saturation')",
    )
    label: str | None = Field(
        default=None, max_length=80, description="e.g. 'saturation' for a level stated without its concurrency"
    )
    requests_sent: int | None = Field(default=None, ge=0)
    requests_completed: int | None = Field(default=None, ge=0)
    requests_failed: int | None = Field(default=None, ge=0)
    warmup_requests: int | None = Field(default=None, ge=0)
    duration_s: float | None = Field(default=None, ge=0)
    output_throughput: Metric | None = None
    total_throughput: Metric | None = None
    request_throughput: Metric | None = None
    per_request_tok_s: Metric | None = Field(default=None, description="output_tokens / (E2E - TTFT)")
    per_request_tok_s_e2e: Metric | None = Field(default=None, description="output_tokens / E2E")
    ttft_ms: Metric | None = None
    tpot_ms: Metric | None = None
    itl_ms: Metric | None = None
    e2e_ms: Metric | None = None
    output_tokens: TokenCounts | None = None
    input_tokens: TokenCounts | None = None
    finish_reasons: dict[str, int] = Field(default_factory=dict)
    speculative: LevelSpeculative | None = None
    prefix_cache: PrefixCache | None = None
    errors: LevelErrors | None = None
    failure: str | None = Field(
        default=None,
        max_length=TEXT_LIMITS["message"],
        description="why this level is not valid (e.g. error rate above the threshold); None: the level is valid. "
        "A failed level never enters a comparison, a chart line or a verdict.",
    )
    client: ClientLoad | None = None
    samples: Samples | None = None

    @model_validator(mode="after")
    def _labelled_if_no_concurrency(self) -> Level:
        if self.concurrency is None and not self.label:
            raise ValueError("a level without a concurrency needs a label saying what it is")
        return self

    @property
    def key(self) -> str:
        return str(self.concurrency) if self.concurrency is not None else (self.label or "?")

    @property
    def failed(self) -> bool:
        return self.failure is not None
