"""The test server's settings and the timing they promise: the truth a correct client must measure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["HEADER", "SERVER_NAME", "TestServerConfig", "Truth", "chunk_plan", "expected_timing"]

HEADER = "x-benchbook-test-server"
SERVER_NAME = "benchbook-testserver"


@dataclass(frozen=True)
class TestServerConfig:
    __test__ = False  # not a pytest test class

    ttft_ms: float = 50.0
    itl_ms: float = 10.0  # between consecutive chunks
    tokens_per_chunk: int = 1
    output_tokens: int = 64  # generated when max_tokens allows ("stop"); ignore_eos generates max_tokens
    usage: bool = True  # report usage (include_usage / continuous_usage_stats / meta_info counts)
    fail_after_chunks: int | None = None  # break the stream after this many content chunks
    fail_mode: Literal["close", "error_event"] = "close"
    fail_status: int | None = None  # answer every generation request with this HTTP status
    fail_message: str | None = None  # the message of an injected error (as servers echo a bad key back)
    role_chunk: bool = False  # chat: send a role-only chunk at once, before the first token
    draft_tokens_per_step: int | None = None  # draft tokens proposed per chunk (= verify step); accepted = tokens - 1
    incremental_output: bool = False  # /generate: only the new text and output_ids per chunk (SGLang's
    # --incremental-streaming-output); default: cumulative, every chunk repeats all text and ids so far
    cached_tokens: int | None = None  # report this many cached prompt tokens (at most the prompt's)
    prefix_cache: bool = False  # report as cached the words a request's prompt shares with an earlier prompt's start
    model: str = SERVER_NAME
    spin_us: int = 0  # yield-spin this long before each deadline (for epoll loops)
    hang_after_chunks: int | None = None  # stop sending tokens after this many chunks, keep the connection open
    pause_file: str | None = None  # while this file exists, streams send no further token (they stay open)
    bad_body: Literal["html", "malformed_sse"] | None = None  # answer 200 with an HTML page / non-JSON events
    ready: bool = True  # False: /health answers 503 forever (a server that never finishes loading)
    max_streams: int | None = None  # over capacity: answer 503 while this many streams are in flight

    def __post_init__(self) -> None:
        if self.ttft_ms < 0 or self.itl_ms < 0:
            raise ValueError("ttft_ms and itl_ms must be >= 0")
        if self.tokens_per_chunk < 1:
            raise ValueError(f"tokens_per_chunk must be >= 1, got {self.tokens_per_chunk}")
        if self.output_tokens < 1:
            raise ValueError(f"output_tokens must be >= 1, got {self.output_tokens}")
        if self.fail_mode not in ("close", "error_event"):
            raise ValueError("fail_mode must be 'close' or 'error_event'")
        if self.fail_status is not None and not 400 <= self.fail_status <= 599:
            raise ValueError("fail_status must be an HTTP error status (400..599)")
        if self.spin_us < 0:
            raise ValueError("spin_us must be >= 0")
        if self.cached_tokens is not None and self.cached_tokens < 0:
            raise ValueError("cached_tokens must be >= 0")
        if self.max_streams is not None and self.max_streams < 1:
            raise ValueError("max_streams must be >= 1")
        for name in ("fail_after_chunks", "hang_after_chunks"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.bad_body not in (None, "html", "malformed_sse"):
            raise ValueError("bad_body must be 'html' or 'malformed_sse'")


def chunk_plan(n_tokens: int, tokens_per_chunk: int) -> list[int]:
    """Tokens carried by each chunk: full chunks, then the remainder."""
    full, rest = divmod(n_tokens, tokens_per_chunk)
    return [tokens_per_chunk] * full + ([rest] if rest else [])


@dataclass(frozen=True)
class Truth:
    output_tokens: int
    chunk_tokens: list[int]
    chunk_offsets_ms: list[float]  # from t0
    ttft_ms: float
    e2e_ms: float
    tpot_ms: float | None
    itl_ms: list[float]  # per token, chunks after the first
    finish_reason: str


def _output_tokens(config: TestServerConfig, max_tokens: int, ignore_eos: bool) -> int:
    return max_tokens if ignore_eos else min(config.output_tokens, max_tokens)


def expected_timing(config: TestServerConfig, max_tokens: int, ignore_eos: bool = False) -> Truth:
    """What a correct client must measure for one request (ignoring transport latency)."""
    n = _output_tokens(config, max_tokens, ignore_eos)
    plan = chunk_plan(n, config.tokens_per_chunk)
    offsets = [config.ttft_ms + k * config.itl_ms for k in range(len(plan))]
    itl = [config.itl_ms / size for size in plan[1:] for _ in range(size)]
    return Truth(
        output_tokens=n,
        chunk_tokens=plan,
        chunk_offsets_ms=offsets,
        ttft_ms=offsets[0],
        e2e_ms=offsets[-1],
        tpot_ms=(offsets[-1] - offsets[0]) / (n - 1) if n > 1 else None,
        itl_ms=itl,
        finish_reason="length" if n == max_tokens else "stop",
    )
