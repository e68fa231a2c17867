"""The benchmark record, schema version 2: one JSON file per run.

Conventions
-----------
* A field the source does not state is ``None`` (rendered "not stated"), never guessed.
* Every metric carries the name of the formula that produced it (and, where it matters, its source).
* Times are milliseconds, throughputs tokens (or requests) per second.
* What the server reported about itself is *observed* (``server.observed``); a field whose value only the
  run config states is listed in ``claims`` (rendered "claimed"). Where config and server disagreed and the
  run went on anyway (``--allow-mismatch``), ``mismatches`` keeps both values.
* Numbers are finite: NaN and Infinity are refused with the file and the field.
* Free text is capped (``TEXT_LIMITS``) so that one record cannot swell every page that lists it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bench.redact import looks_like_secret

__all__ = [
    "SCHEMA_VERSION",
    "TEST_SERVER_ENGINE",
    "TEXT_LIMITS",
    "Benchbook",
    "ClientLoad",
    "Environment",
    "Gpu",
    "Level",
    "LevelErrors",
    "LevelSpeculative",
    "Metric",
    "Mismatch",
    "ModelRef",
    "Observed",
    "PrefixCache",
    "Provenance",
    "Recipe",
    "Record",
    "Samples",
    "Server",
    "Speculative",
    "Status",
    "TokenCounts",
    "Workload",
]

SCHEMA_VERSION = 2

TEXT_LIMITS: dict[str, int] = {
    "title": 200,
    "description": 4000,
    "note": 2000,
    "message": 2000,
    "log_excerpt": 8000,
    "error_example": 500,
    "error_examples": 20,
    "tag": 64,
    "tags": 32,
}
"""The longest free text each field takes (characters; ``error_examples`` and ``tags`` count items)."""

SLUG = r"^[a-z0-9][a-z0-9._-]*$"

TEST_SERVER_ENGINE = "benchbook-testserver"
"""The engine name benchbook's own test server announces (``server.observed.engine``)."""


class _Strict(BaseModel):
    """Unknown keys are refused so that a typo cannot silently drop a figure."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


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


class LevelSpeculative(_Strict):
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


class PrefixCache(_Strict):
    """Prompt tokens served from the server's prefix cache over the requests of a level."""

    cached_tokens: int = Field(ge=0, description="sum of cached prompt tokens over the requests that report it")
    input_tokens: int = Field(ge=0, description="sum of prompt tokens over the same requests")
    hit_share: float = Field(ge=0, le=1, description="cached_tokens / input_tokens")
    requests: int = Field(ge=0, description="requests that reported a cached-token count")
    source: str = Field(max_length=TEXT_LIMITS["note"], description="e.g. meta_info.cached_tokens")


class LevelErrors(_Strict):
    by_kind: dict[str, int] = Field(default_factory=dict)
    examples: list[Annotated[str, Field(max_length=TEXT_LIMITS["error_example"])]] = Field(
        default_factory=list, max_length=TEXT_LIMITS["error_examples"]
    )
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


class Provenance(_Strict):
    kind: Literal["measured", "transcribed", "imported"]
    source: str | None = Field(
        default=None, max_length=TEXT_LIMITS["note"], description="citation, file or URL the figures come from"
    )
    tool: str | None = Field(default=None, description="what produced the figures (benchbook, sglang bench_serving...)")
    measured_at: datetime | None = Field(default=None, description="when the figures were measured, if known")
    test_server: bool = Field(default=False, description="measured against a synthetic test server, not an engine")
    notes: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])

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
    sha256: str | None = Field(default=None, description="sha256 of the weights file the server loaded (observed)")
    quantization: str | None = None
    conversion: dict[str, str] = Field(
        default_factory=dict,
        description="how a converted model was made: source file sha256, converter and library versions",
    )


class Observed(_Strict):
    """What the server reported about itself (its info endpoints, its own header), never what a config says.

    ``sources`` names the endpoint each field came from; ``endpoints`` the HTTP status of every endpoint asked.
    """

    engine: str | None = Field(default=None, description="sglang, vllm, llama.cpp, benchbook-testserver, openai")
    version: str | None = None
    model: str | None = Field(default=None, description="the model path or id the server reports")
    tp_size: int | None = Field(default=None, ge=1)
    dp_size: int | None = Field(default=None, ge=1)
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    draft_model: str | None = None
    allreduce_fusion: bool | None = None
    attention_backend: str | None = None
    parallel_slots: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict, description="other reported facts, by name")
    sources: dict[str, str] = Field(default_factory=dict, description="field -> endpoint it was read from")
    endpoints: dict[str, int | None] = Field(
        default_factory=dict, description="endpoint -> HTTP status (None: no answer)"
    )


class Mismatch(_Strict):
    """A comparability field on which the config and the server disagreed (kept with ``--allow-mismatch``)."""

    field: str
    claimed: Any = None
    observed: Any = None


class Recipe(_Strict):
    """How to measure this record again: the resolved config and the command line that produced it."""

    config: dict[str, Any] = Field(description="the resolved run config (after overrides), secrets redacted")
    config_path: str | None = Field(default=None, description="the config file, relative to the repository")
    overrides: list[str] = Field(default_factory=list, description="command-line overrides, as KEY=VALUE")
    command: str | None = Field(default=None, description="the bench command that reproduces this record")
    rerun_of: str | None = Field(default=None, description="the id of the record this run measured again")


class Server(_Strict):
    engine: str
    version: str | None = None
    url: str | None = None
    command: list[str] | None = Field(default=None, description="the full launch command line, if launched")
    args: dict[str, Any] = Field(default_factory=dict, description="every launch argument, by name")
    server_info: dict[str, Any] | None = Field(default=None, description="the engine's own server-info payload")
    observed: Observed | None = Field(default=None, description="what the server reported about itself")
    notes: list[Annotated[str, Field(max_length=TEXT_LIMITS["note"])]] = Field(default_factory=list)


class Speculative(_Strict):
    algorithm: str | None = Field(default=None, description="EAGLE3, ngram-simple, ...; None: no speculation")
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    notes: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])


class Gpu(_Strict):
    model: str | None = None
    architecture: str | None = None
    count: int | None = Field(default=None, ge=0)
    driver: str | None = None
    memory_mib: int | None = None
    power_limit_w: float | None = None
    clocks: dict[str, Any] = Field(default_factory=dict)
    devices: list[dict[str, Any]] = Field(
        default_factory=list, description="one entry per GPU (index, model, memory, clocks, power limit)"
    )


class Environment(_Strict):
    gpu: Gpu = Field(default_factory=Gpu)
    topology: str | None = Field(default=None, description="GPU-to-GPU topology (nvidia-smi topo -m)")
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
    prompt_set_description: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])
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
    request_timeout_s: float | None = Field(
        default=None, gt=0, description="seconds one request could take before it failed as a timeout"
    )
    error_threshold: float | None = Field(
        default=None, ge=0, le=1, description="a level whose error rate (failed / sent) is above this is failed"
    )
    prefix: Literal["repeated", "unique"] | None = Field(
        default=None,
        description="repeated: prompts are sent as written, so repeats can hit a prefix cache; unique: every "
        "request starts with its own marker, so no two requests share a prefix beyond the chat template",
    )
    cache_policy: str | None = Field(
        default=None, max_length=TEXT_LIMITS["note"], description="the server's prefix cache as measured, in words"
    )


class Status(_Strict):
    state: Literal["complete", "partial", "failed"]
    message: str | None = Field(default=None, max_length=TEXT_LIMITS["message"])
    log_excerpt: str | None = Field(default=None, max_length=TEXT_LIMITS["log_excerpt"])
    failed_level: int | None = None


class Record(_Strict):
    schema_version: Literal[2] = 2
    id: str = Field(pattern=r"^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9._-]*-[0-9a-f]{7,12}$", max_length=160)
    experiment: str = Field(pattern=SLUG, max_length=100)
    variant: str = Field(pattern=SLUG, max_length=100)
    title: str | None = Field(default=None, max_length=TEXT_LIMITS["title"])
    description: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])
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
    tags: list[Annotated[str, Field(max_length=TEXT_LIMITS["tag"])]] = Field(
        default_factory=list, max_length=TEXT_LIMITS["tags"]
    )
    run_group: str | None = Field(
        default=None, max_length=200, description="records of one configuration measured together"
    )
    claims: list[str] = Field(
        default_factory=list,
        description="dotted fields whose values only the run config states: the server did not report them",
    )
    mismatches: list[Mismatch] = Field(
        default_factory=list, description="config vs server disagreements kept with --allow-mismatch"
    )
    recipe: Recipe | None = None

    @field_validator("experiment", "variant")
    @classmethod
    def _not_secret(cls, v: str) -> str:
        if looks_like_secret(v):
            raise ValueError("a name that does not look like a key or token (it names the record's file and page)")
        return v

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
        observed = self.server.observed
        if observed is not None and observed.engine == TEST_SERVER_ENGINE and not self.provenance.test_server:
            raise ValueError(
                "the server identified itself as benchbook's test server: provenance.test_server must be true"
            )
        return self

    @property
    def is_speculative(self) -> bool:
        return self.speculative is not None and self.speculative.algorithm is not None

    def is_claimed(self, field: str) -> bool:
        """True when ``field`` (dotted) or a parent of it is listed in ``claims``."""
        return any(field == c or field.startswith(c + ".") for c in self.claims)
