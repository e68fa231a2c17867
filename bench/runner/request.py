"""One generation request and its result: what the client sends (:class:`RequestSpec`, :func:`build_request`) and
what it measured (:class:`RequestResult`). Pure: no I/O here (the client that sends it is ``bench.runner.client``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from bench.redact import redact_text

__all__ = [
    "CACHED_SOURCES",
    "DRAFT_SOURCES",
    "ERROR_KINDS",
    "TOKEN_SOURCES",
    "Api",
    "RequestResult",
    "RequestSpec",
    "build_request",
    "one_line",
]

Api = Literal["chat", "completions", "generate"]

ERROR_KINDS = ("connect", "http_4xx", "http_5xx", "timeout", "stream_broken", "no_tokens", "bad_response", "cancelled")
TOKEN_SOURCES = ("server_usage", "server_meta_info", "tokenizer", "unknown")
CACHED_SOURCES = ("meta_info.cached_tokens", "usage.prompt_tokens_details.cached_tokens", "timings.cache_n")
DRAFT_SOURCES = (
    "meta_info.spec_accepted_drafts/spec_proposed_drafts",
    "meta_info.spec_num_correct_drafts/spec_num_proposed_drafts",
    "timings.draft_n_accepted/draft_n",
)
_ROUTES: dict[str, str] = {"chat": "/v1/chat/completions", "completions": "/v1/completions", "generate": "/generate"}
_MESSAGE_LIMIT = 300


@dataclass(frozen=True)
class RequestSpec:
    prompt: str | list[dict[str, str]]  # raw text (completions/generate) or chat messages
    max_tokens: int
    temperature: float = 0.0
    ignore_eos: bool = False
    seed: int | None = None
    api: Api = "chat"  # OpenAI chat, OpenAI completions, SGLang native /generate
    model: str | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class RequestResult:
    ok: bool
    t_sent_ns: int  # perf_counter_ns just before the request goes onto the socket (see the module docstring)
    t_first_ns: int | None  # first chunk carrying non-empty generated text
    t_last_ns: int | None  # last token-bearing chunk
    t_done_ns: int | None  # response fully read (for a failure: when the failure was seen)
    chunk_times_ns: list[int]  # arrival time of each token-bearing chunk
    chunk_tokens: list[int] | None  # tokens each token-bearing chunk carried, when the server says so
    output_tokens: int | None  # the server's count (or the tokenizer's, see token_source); never max_tokens
    input_tokens: int | None
    token_source: str  # "server_usage" | "server_meta_info" | "tokenizer" | "unknown"
    finish_reason: str | None
    draft_tokens: int | None = None  # proposed draft tokens: llama.cpp timings.draft_n, SGLang spec_proposed_drafts
    accepted_tokens: int | None = None  # accepted: timings.draft_n_accepted, SGLang spec_accepted_drafts
    verify_steps: int | None = None  # SGLang meta_info.spec_verify_ct
    error_kind: str | None = None  # one of ERROR_KINDS
    error: str | None = None
    status_code: int | None = None
    input_token_source: str = "unknown"  # same vocabulary as token_source, for input_tokens
    t_start_ns: int | None = None  # send() called; t_sent_ns - t_start_ns = client overhead, pool wait, TCP setup
    cached_tokens: int | None = None  # prompt tokens served from the server's prefix cache
    cached_source: str | None = None  # e.g. "meta_info.cached_tokens" (CACHED_SOURCES)
    draft_source: str | None = None  # where draft_tokens/accepted_tokens came from (DRAFT_SOURCES)
    server_accept_rate: float | None = None  # SGLang meta_info.spec_accept_rate: a cross-check, never aggregated
    server_accept_length: float | None = None  # SGLang meta_info.spec_accept_length: a cross-check
    stream_mode: str | None = None  # /generate: "cumulative" or "incremental" output_ids, once known
    decoded_chars: int = 0  # characters of the stream decoded into Python objects (the parser's work)


def one_line(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    """One line of at most ``limit`` characters, secrets hidden before the cut (so none is split and kept)."""
    text = redact_text(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chat_messages(prompt: str | list[dict[str, str]]) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)


def build_request(spec: RequestSpec, *, continuous_usage: bool = True) -> tuple[str, dict[str, Any]]:
    """The route and JSON body for ``spec`` (pure). ``extra_body`` is merged last, at the top level
    (for ``generate``, an ``extra_body["sampling_params"]`` mapping is merged into the sampling parameters)."""
    if spec.max_tokens < 1:
        raise ValueError(f"RequestSpec.max_tokens must be >= 1, got {spec.max_tokens}")
    extra = dict(spec.extra_body)
    body: dict[str, Any]
    if spec.api == "generate":
        if not isinstance(spec.prompt, str):
            raise ValueError("RequestSpec.prompt must be a string for api='generate' (SGLang /generate), not messages")
        sampling: dict[str, Any] = {"max_new_tokens": spec.max_tokens, "temperature": spec.temperature}
        if spec.ignore_eos:
            sampling["ignore_eos"] = True
        if spec.seed is not None:
            sampling["sampling_seed"] = spec.seed
        extra_sampling = extra.pop("sampling_params", None)
        if isinstance(extra_sampling, Mapping):
            sampling.update(extra_sampling)
        body = {"text": spec.prompt, "sampling_params": sampling, "stream": True}
    else:
        body = {"max_tokens": spec.max_tokens, "temperature": spec.temperature, "stream": True}
        if spec.api == "chat":
            body["messages"] = _chat_messages(spec.prompt)
        elif spec.api == "completions":
            if not isinstance(spec.prompt, str):
                raise ValueError("RequestSpec.prompt must be a string for api='completions', not chat messages")
            body["prompt"] = spec.prompt
        else:
            raise ValueError(f"RequestSpec.api must be one of chat, completions, generate; got {spec.api!r}")
        options: dict[str, Any] = {"include_usage": True}
        if continuous_usage:
            options["continuous_usage_stats"] = True
        body["stream_options"] = options
        if spec.ignore_eos:
            body["ignore_eos"] = True
        if spec.seed is not None:
            body["seed"] = spec.seed
    if spec.model is not None:
        body["model"] = spec.model
    body.update(extra)
    return _ROUTES[spec.api], body
