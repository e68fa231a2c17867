"""The benchmark record, schema version 1: one JSON file per run.

Conventions
-----------
* A field the source does not state is ``None`` (rendered "not stated"), never guessed.
* Every metric carries the name of the formula that produced it (see ``bench.record.formulas``).
* Times are milliseconds, throughputs tokens (or requests) per second.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "SCHEMA_VERSION",
    "Benchbook",
    "ClientLoad",
    "Environment",
    "Gpu",
    "Level",
    "LevelErrors",
    "LevelSpeculative",
    "Metric",
    "ModelRef",
    "Provenance",
    "Record",
    "Samples",
    "Server",
    "Speculative",
    "Status",
    "TokenCounts",
    "Workload",
]

SCHEMA_VERSION = 1

SLUG = r"^[a-z0-9][a-z0-9._-]*$"


class _Strict(BaseModel):
    """Unknown keys are refused so that a typo cannot silently drop a figure."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Metric(_Strict):
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
    note: str | None = None

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


class TokenCounts(_Strict):
    total: int | None = Field(default=None, ge=0)
    source: Literal["server_usage", "server_meta_info", "tokenizer", "test_server", "unknown"] = "unknown"


class Samples(_Strict):
    """Per-request measurements of the successful requests of a level, in request order.

    Kept so that confidence intervals can be computed later (bootstrap over requests).
    """

    ttft_ms: list[float]
    e2e_ms: list[float]
    output_tokens: list[int | None]
    input_tokens: list[int | None] = Field(default_factory=list)

    @model_validator(mode="after")
    def _same_length(self) -> Samples:
        n = len(self.ttft_ms)
        if len(self.e2e_ms) != n or len(self.output_tokens) != n:
            raise ValueError("ttft_ms, e2e_ms and output_tokens must have one entry per request")
        if self.input_tokens and len(self.input_tokens) != n:
            raise ValueError("input_tokens must be empty or have one entry per request")
        return self


class LevelSpeculative(_Strict):
    """Speculative decoding figures for the requests of this level only (never a lifetime average)."""

    accept_length: Metric | None = None
    acceptance_rate: Metric | None = None
    draft_tokens: int | None = Field(default=None, ge=0)
    accepted_tokens: int | None = Field(default=None, ge=0)
    verify_steps: int | None = Field(default=None, ge=0)
    method: str | None = Field(default=None, description="how the figures were read, e.g. per-request timings")


class LevelErrors(_Strict):
    by_kind: dict[str, int] = Field(default_factory=dict)
    examples: list[str] = Field(default_factory=list)
    error_rate: float | None = Field(default=None, ge=0, le=1)
    flagged: bool = Field(default=False, description="error rate above the run's threshold")


class ClientLoad(_Strict):
    """What the benchmark client itself spent on a level (warm-up included): compare with its measured ceiling
    (``benchmarks/client_ceiling.py``) to tell whether the client, not the server, was the limit."""

    wall_s: float = Field(ge=0)
    cpu_s: float = Field(ge=0, description="CPU time of the client process (all threads)")
    cpu_percent: float = Field(ge=0, description="cpu_s / wall_s x 100; 100 = one core saturated")
    token_events: int = Field(ge=0, description="token-bearing stream chunks received")
    token_events_per_s: float = Field(ge=0)


class Level(_Strict):
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description="concurrent requests; None when the source does not state it (e.g. 'at saturation')",
    )
    label: str | None = Field(default=None, description="e.g. 'saturation' for a level stated without its concurrency")
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
    errors: LevelErrors | None = None
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


class Provenance(_Strict):
    kind: Literal["measured", "transcribed", "imported"]
    source: str | None = Field(default=None, description="citation, file or URL the figures come from")
    tool: str | None = Field(default=None, description="what produced the figures (benchbook, sglang bench_serving...)")
    measured_at: datetime | None = Field(default=None, description="when the figures were measured, if known")
    test_server: bool = Field(default=False, description="measured against a synthetic test server, not an engine")
    notes: str | None = None

    @model_validator(mode="after")
    def _cited(self) -> Provenance:
        if self.kind in ("transcribed", "imported") and not self.source:
            raise ValueError(f"a {self.kind} record must cite its source")
        return self


class Benchbook(_Strict):
    version: str | None = None
    commit: str | None = None
    dirty: bool | None = None


class ModelRef(_Strict):
    name: str | None = Field(default=None, description="None: the source does not state it")
    revision: str | None = None
    path: str | None = None
    sha256: str | None = None
    quantization: str | None = None


class Server(_Strict):
    engine: str
    version: str | None = None
    url: str | None = None
    command: list[str] | None = Field(default=None, description="the full launch command line, if launched")
    args: dict[str, Any] = Field(default_factory=dict, description="every launch argument, by name")
    server_info: dict[str, Any] | None = Field(default=None, description="the engine's own server-info payload")
    notes: list[str] = Field(default_factory=list)


class Speculative(_Strict):
    algorithm: str | None = Field(default=None, description="EAGLE3, ngram-simple, ...; None: no speculation")
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    notes: str | None = None


class Gpu(_Strict):
    model: str | None = None
    architecture: str | None = None
    count: int | None = Field(default=None, ge=0)
    driver: str | None = None
    memory_mib: int | None = None
    power_limit_w: float | None = None
    clocks: dict[str, Any] = Field(default_factory=dict)


class Environment(_Strict):
    gpu: Gpu = Field(default_factory=Gpu)
    cuda_runtime: str | None = None
    nccl_version: str | None = None
    env_vars: dict[str, str] = Field(default_factory=dict, description="allow-listed variables (NCCL_*, ...)")
    versions: dict[str, str] = Field(default_factory=dict, description="torch, flashinfer, engine, ...")
    features: dict[str, bool | str | int | float] = Field(
        default_factory=dict, description="performance-relevant switches, e.g. flashinfer_allreduce_fusion"
    )
    info: dict[str, Any] = Field(default_factory=dict, description="host facts: shown, never comparison-splitting")


class Workload(_Strict):
    prompt_set: str
    prompt_set_hash: str | None = Field(default=None, description="sha256 of the prompt set's content")
    prompt_set_description: str | None = None
    num_prompts: int | None = Field(default=None, ge=0)
    api: str | None = Field(default=None, description="chat, completions, generate")
    requests_per_level: int | None = Field(default=None, ge=0)
    warmup_requests: int | None = Field(default=None, ge=0)
    planned_levels: list[int] | None = None
    concurrency_range: tuple[int, int] | None = Field(default=None, description="first and last level, if known")
    max_tokens: int | None = None
    temperature: float | None = None
    ignore_eos: bool | None = None
    seed: int | None = None


class Status(_Strict):
    state: Literal["complete", "partial", "failed"]
    message: str | None = None
    log_excerpt: str | None = None
    failed_level: int | None = None


class Record(_Strict):
    schema_version: Literal[1] = 1
    id: str = Field(pattern=r"^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9._-]*-[0-9a-f]{7,12}$")
    experiment: str = Field(pattern=SLUG)
    variant: str = Field(pattern=SLUG)
    title: str | None = None
    description: str | None = None
    created_at: datetime
    provenance: Provenance
    benchbook: Benchbook = Field(default_factory=Benchbook)
    server: Server
    model: ModelRef
    draft_model: ModelRef | None = None
    speculative: Speculative | None = None
    environment: Environment = Field(default_factory=Environment)
    workload: Workload
    levels: list[Level]
    status: Status
    tags: list[str] = Field(default_factory=list)
    run_group: str | None = Field(default=None, description="records of one configuration measured together")

    @field_validator("created_at")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        if v.tzinfo is None or v.utcoffset() is None or v.utcoffset().total_seconds() != 0:  # type: ignore[union-attr]
            raise ValueError("created_at must be a UTC timestamp ending in Z or +00:00")
        return v

    @model_validator(mode="after")
    def _id_matches(self) -> Record:
        if f"-{self.variant}-" not in self.id:
            raise ValueError(f"id {self.id!r} must contain the variant {self.variant!r}")
        seen: set[str] = set()
        for lv in self.levels:
            if lv.key in seen:
                raise ValueError(f"level {lv.key} appears twice")
            seen.add(lv.key)
        return self

    @property
    def is_speculative(self) -> bool:
        return self.speculative is not None and self.speculative.algorithm is not None
