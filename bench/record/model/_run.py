"""Everything a record says about how it was measured: provenance, benchbook's own version, the server (as
configured and as it reported itself), the models, speculative decoding, the environment, the workload, the status
and the recipe to measure it again."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ._base import TEXT_LIMITS, Strict

__all__ = [
    "Benchbook",
    "Environment",
    "Gpu",
    "Mismatch",
    "ModelRef",
    "Observed",
    "Provenance",
    "Recipe",
    "Server",
    "Speculative",
    "Status",
    "Workload",
]


class Provenance(Strict):
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


class Benchbook(Strict):
    version: str | None = None
    commit: str | None = None
    dirty: bool | None = None


class ModelRef(Strict):
    name: str | None = Field(default=None, description="None: the source does not state it")
    revision: str | None = None
    path: str | None = None
    sha256: str | None = Field(default=None, description="sha256 of the weights file the server loaded (observed)")
    quantization: str | None = None
    conversion: dict[str, str] = Field(
        default_factory=dict,
        description="how a converted model was made: source file sha256, converter and library versions",
    )


class Observed(Strict):
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


class Mismatch(Strict):
    """A comparability field on which the config and the server disagreed (kept with ``--allow-mismatch``)."""

    field: str
    claimed: Any = None
    observed: Any = None


class Recipe(Strict):
    """How to measure this record again: the resolved config and the command line that produced it."""

    config: dict[str, Any] = Field(description="the resolved run config (after overrides), secrets redacted")
    config_path: str | None = Field(default=None, description="the config file, relative to the repository")
    overrides: list[str] = Field(default_factory=list, description="command-line overrides, as KEY=VALUE")
    command: str | None = Field(default=None, description="the bench command that reproduces this record")
    rerun_of: str | None = Field(default=None, description="the id of the record this run measured again")


class Server(Strict):
    engine: str
    version: str | None = None
    url: str | None = None
    command: list[str] | None = Field(default=None, description="the full launch command line, if launched")
    args: dict[str, Any] = Field(default_factory=dict, description="every launch argument, by name")
    server_info: dict[str, Any] | None = Field(default=None, description="the engine's own server-info payload")
    observed: Observed | None = Field(default=None, description="what the server reported about itself")
    notes: list[Annotated[str, Field(max_length=TEXT_LIMITS["note"])]] = Field(default_factory=list)


class Speculative(Strict):
    algorithm: str | None = Field(default=None, description="EAGLE3, ngram-simple, ...; None: no speculation")
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    notes: str | None = Field(default=None, max_length=TEXT_LIMITS["description"])


class Gpu(Strict):
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


class Environment(Strict):
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


class Workload(Strict):
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


class Status(Strict):
    state: Literal["complete", "partial", "failed"]
    message: str | None = Field(default=None, max_length=TEXT_LIMITS["message"])
    log_excerpt: str | None = Field(default=None, max_length=TEXT_LIMITS["log_excerpt"])
    failed_level: int | None = None
