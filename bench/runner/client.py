"""The streaming HTTP client: sends one generation request and timestamps every token-bearing chunk.

One :class:`StreamingClient` (keep-alive httpx connections, a connection limit at least the concurrency, spread
over small httpx pools: see the class) is shared by a whole run, so TCP setup does not land inside TTFT.
Measurement rules (``shared/MEASUREMENT.md``):

* ``t_first_ns`` is the first chunk carrying non-empty generated text (content or reasoning). A role-only chunk,
  a finish-only chunk, a usage-only chunk and ``[DONE]`` carry no token.
* Output tokens come from the server (``usage.completion_tokens``; SGLang native ``meta_info.completion_tokens``),
  else from the ``tokenizer`` callable if one was given, else they are unknown (None): never ``max_tokens`` and
  never the number of chunks.
* ``t_sent_ns`` is taken when httpcore starts writing the request headers to the socket (its ``trace``
  extension), so request building, a wait for a pooled connection and TCP setup are not inside TTFT;
  ``t_start_ns`` (``send()`` called) keeps that client overhead visible. A transport without the trace
  (``httpx.MockTransport``) gets ``t_sent_ns = t_start_ns``.
* Per-chunk token counts come from cumulative usage per chunk (``continuous_usage_stats``); a count that rises on
  a chunk without text is carried to the next token-bearing chunk.
* SGLang ``/generate``: a chunk bears tokens when its ``output_ids`` grow (new tokens = the growth; TTFT is the
  first such chunk). Chunks are cumulative by default (each repeats all text and ids so far) or incremental
  (``--incremental-streaming-output``); both are detected per request, and only ``meta_info`` is decoded, so the
  parse cost stays linear in tokens (``bench.runner.native``). Token counts are ``meta_info.completion_tokens``.
* Also read per request where the server gives them: cached prompt tokens (``meta_info.cached_tokens``,
  ``usage.prompt_tokens_details.cached_tokens``, llama.cpp ``timings.cache_n``), proposed and accepted draft
  tokens (SGLang ``meta_info.spec_proposed_drafts/spec_accepted_drafts``, llama.cpp ``timings.draft_n/
  draft_n_accepted``) and verify steps (SGLang ``meta_info.spec_verify_ct``).

:meth:`StreamingClient.send` never raises for server or network trouble: it returns ``ok=False`` with an
``error_kind``. A malformed :class:`RequestSpec` (chat messages for a text route) raises ``ValueError``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any, Literal

import httpx

from bench.redact import redact_text

from .native import IdsCounter, split_chunk
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "CACHED_SOURCES",
    "DRAFT_SOURCES",
    "ERROR_KINDS",
    "TOKEN_SOURCES",
    "Api",
    "RequestResult",
    "RequestSpec",
    "StreamingClient",
    "build_request",
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
# SGLang 0.5.17 sends both key pairs with equal values; the first pair present is read
_SGLANG_DRAFT_KEYS = (
    ("spec_accepted_drafts", "spec_proposed_drafts", DRAFT_SOURCES[0]),
    ("spec_num_correct_drafts", "spec_num_proposed_drafts", DRAFT_SOURCES[1]),
)

# a /generate chunk shorter than this is decoded whole: for small (incremental) chunks one json.loads is cheaper
# than finding meta_info and counting ids; bounded, so the cost per token stays constant
_WHOLE_BELOW = 2048
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


class _StreamError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _truncate(text: str, limit: int = _MESSAGE_LIMIT) -> str:
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


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class _StreamState:
    """Folds the events of one response into timestamps and counts.

    SGLang ``/generate`` chunks go through :func:`bench.runner.native.split_chunk` (only ``meta_info`` is
    decoded; new tokens per chunk come from the growth of ``output_ids``, cumulative or incremental); a chunk in
    another layout, or without ``output_ids``, is decoded whole and its text compared with the previous text.
    """

    __slots__ = (
        "accept_length",
        "accept_rate",
        "accepted",
        "api",
        "cached",
        "cached_source",
        "chunk_times",
        "chunk_tokens",
        "chunk_tokens_known",
        "counted",
        "decoded_chars",
        "done",
        "draft",
        "draft_source",
        "finish_reason",
        "ids",
        "input_tokens",
        "keep_text",
        "last_text",
        "output_tokens",
        "text_parts",
        "verify_steps",
    )

    def __init__(self, api: str, keep_text: bool) -> None:
        self.api = api
        self.keep_text = keep_text
        self.chunk_times: list[int] = []
        self.chunk_tokens: list[int] = []
        self.chunk_tokens_known = True
        self.counted = 0  # cumulative server count attributed to token-bearing chunks so far
        self.done = False
        self.finish_reason: str | None = None
        self.output_tokens: int | None = None
        self.input_tokens: int | None = None
        self.draft: int | None = None
        self.accepted: int | None = None
        self.draft_source: str | None = None
        self.verify_steps: int | None = None
        self.accept_rate: float | None = None
        self.accept_length: float | None = None
        self.cached: int | None = None
        self.cached_source: str | None = None
        self.ids = IdsCounter()
        self.decoded_chars = 0
        self.text_parts: list[str] = []
        self.last_text = ""

    def on_event(self, event: SSEEvent, now: int) -> None:
        data = event.data
        if data == "[DONE]":
            self.done = True
            return
        if not data.strip():
            return
        if self.api == "generate" and event.event is None and len(data) > _WHOLE_BELOW:
            chunk = split_chunk(data, self.ids.skip)
            if chunk is not None:
                self.decoded_chars += chunk.decoded_chars
                ids_text = None
                completion = _int_or_none(chunk.meta.get("completion_tokens"))
                if not chunk.skipped and self.ids.wants_text(completion):
                    ids_text = "".join(data[chunk.ids_span[0] : chunk.ids_span[1]].split())
                    self.decoded_chars += len(ids_text)
                self._native(chunk.meta, now, self.ids.update(chunk, completion, ids_text), None)
                return
        self.decoded_chars += len(data)
        try:
            obj = json.loads(data)
        except ValueError:
            raise _StreamError("bad_response", f"event is not JSON: {_truncate(data, 120)}") from None
        if not isinstance(obj, dict):
            raise _StreamError("bad_response", f"event is not a JSON object: {_truncate(data, 120)}")
        if event.event == "error" or "error" in obj or obj.get("object") == "error":
            err = obj.get("error", obj)
            message = err.get("message", err) if isinstance(err, dict) else err
            raise _StreamError("stream_broken", f"error event mid-stream: {_truncate(str(message))}")
        if self.api == "generate":
            raw_meta, ids, raw = obj.get("meta_info"), obj.get("output_ids"), obj.get("text")
            meta = raw_meta if isinstance(raw_meta, dict) else {}
            ids_text = None
            if isinstance(ids, list) and self.ids.wants_text(_int_or_none(meta.get("completion_tokens"))):
                ids_text = ",".join(map(str, ids))
            new = None
            if isinstance(ids, list):
                self.ids.skip = 0  # decoded whole: the next chunk's ids are counted whole too
                new = self.ids.new_tokens(len(ids), _int_or_none(meta.get("completion_tokens")), ids_text)
            self._native(meta, now, new, raw if isinstance(raw, str) else "")
        else:
            self._openai(obj, now)

    def _cached(self, value: Any, source: str) -> None:
        cached = _int_or_none(value)
        if cached is not None and (self.cached_source is None or self.cached_source == source):
            self.cached, self.cached_source = cached, source

    def _drafts(self, accepted: Any, proposed: Any, source: str) -> None:
        a, p = _int_or_none(accepted), _int_or_none(proposed)
        if a is not None and p is not None and (self.draft_source is None or self.draft_source == source):
            self.accepted, self.draft, self.draft_source = a, p, source

    def _openai(self, obj: dict[str, Any], now: int) -> None:
        text = ""
        choices = obj.get("choices")
        if isinstance(choices, list) and choices:
            choice = choices[0]
            if isinstance(choice, dict):
                if self.api == "chat":
                    delta = choice.get("delta")
                    if isinstance(delta, dict):
                        content = delta.get("content") or ""
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
                        text = (reasoning if isinstance(reasoning, str) else "") + (
                            content if isinstance(content, str) else ""
                        )
                else:
                    raw = choice.get("text")
                    text = raw if isinstance(raw, str) else ""
                reason = choice.get("finish_reason")
                if isinstance(reason, str) and reason:
                    self.finish_reason = reason
        cumulative: int | None = None
        usage = obj.get("usage")
        if isinstance(usage, dict):
            cumulative = _int_or_none(usage.get("completion_tokens"))
            if cumulative is not None:
                self.output_tokens = cumulative
            prompt = _int_or_none(usage.get("prompt_tokens"))
            if prompt is not None:
                self.input_tokens = prompt
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                self._cached(details.get("cached_tokens"), CACHED_SOURCES[1])
        timings = obj.get("timings")
        if isinstance(timings, dict):  # llama.cpp
            self._drafts(timings.get("draft_n_accepted"), timings.get("draft_n"), DRAFT_SOURCES[2])
            if self.cached_source != CACHED_SOURCES[1]:
                self._cached(timings.get("cache_n"), CACHED_SOURCES[2])
        if text:
            self._token_chunk(now, cumulative)
            if self.keep_text:
                self.text_parts.append(text)

    def _native(self, meta: dict[str, Any], now: int, new: int | None, text: str | None) -> None:
        """One /generate chunk: ``new`` is the number of output ids it adds (None: the chunk has no
        ``output_ids``, then ``text`` decides whether it carries a token)."""
        cumulative = _int_or_none(meta.get("completion_tokens"))
        prompt = _int_or_none(meta.get("prompt_tokens"))
        if prompt is not None:
            self.input_tokens = prompt
        self._cached(meta.get("cached_tokens"), CACHED_SOURCES[0])
        verify = _int_or_none(meta.get("spec_verify_ct"))
        if verify is not None:
            self.verify_steps = verify
        for accepted, proposed, source in _SGLANG_DRAFT_KEYS:
            self._drafts(meta.get(accepted), meta.get(proposed), source)
        rate, length = _float_or_none(meta.get("spec_accept_rate")), _float_or_none(meta.get("spec_accept_length"))
        if rate is not None:
            self.accept_rate = rate
        if length is not None:
            self.accept_length = length
        reason = meta.get("finish_reason")
        if isinstance(reason, dict):
            reason = reason.get("type")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
        if new is not None:
            self.output_tokens = cumulative if cumulative is not None else self.ids.seen
            if new:
                self.chunk_times.append(now)
                self.chunk_tokens.append(new)
                self.counted = self.ids.seen
            return
        text = text or ""
        # no output_ids: SGLang streams the cumulative text by default, the increment with
        # --incremental-streaming-output
        new_text = text[len(self.last_text) :] if text.startswith(self.last_text) else text
        self.last_text = text if text.startswith(self.last_text) else self.last_text + text
        if cumulative is not None:
            bearing = cumulative > self.counted and bool(new_text)
            self.output_tokens = cumulative
        else:
            bearing = bool(new_text)
        if bearing:
            self._token_chunk(now, cumulative)
            if self.keep_text:
                self.text_parts.append(new_text)

    def _token_chunk(self, now: int, cumulative: int | None) -> None:
        self.chunk_times.append(now)
        if cumulative is None:
            self.chunk_tokens_known = False
        else:
            self.chunk_tokens.append(cumulative - self.counted)
            self.counted = cumulative


class StreamingClient:
    """The run's one HTTP client: keep-alive connections, at most ``max_connections`` (at least the concurrency).

    Internally the connections are split over pools of ``shard_size`` connections, each an ``httpx.AsyncClient``,
    and a request goes to the pool with the most free connections. Reason (measured with
    ``benchmarks/client_ceiling.py``, C=64, 2-core VM): httpcore's pool re-scans all its connections
    (quadratically, with a socket poll per idle connection) on every request start and end; one pool of 64
    connections delivered 895 token events/s, pools of 8 4,808/s, pools of 1 7,153/s.
    With a custom ``transport`` there is one pool.
    """

    def __init__(
        self,
        base_url: str,
        *,
        max_connections: int,
        timeout_s: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        tokenizer: Callable[[str], int] | None = None,
        continuous_usage: bool = True,
        keepalive_expiry_s: float = 600.0,
        shard_size: int = 1,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        if shard_size < 1:
            raise ValueError(f"shard_size must be >= 1, got {shard_size}")
        root = base_url.rstrip("/")
        if root.endswith("/v1"):
            root = root[: -len("/v1")]
        self.base_url = root
        self.max_connections = max_connections
        self._timeout_s = timeout_s
        self._tokenizer = tokenizer
        self._continuous_usage = continuous_usage
        if transport is not None:
            sizes = [max_connections]
        else:
            full, rest = divmod(max_connections, shard_size)
            sizes = [shard_size] * full + ([rest] if rest else [])
        # one SSL context shared by the pools; certificates are loaded (~50 ms) only for https
        verify = httpx.create_ssl_context(verify=root.startswith("https:"))
        self._shards = [
            httpx.AsyncClient(
                base_url=root,
                limits=httpx.Limits(
                    max_connections=size, max_keepalive_connections=size, keepalive_expiry=keepalive_expiry_s
                ),
                timeout=httpx.Timeout(timeout_s),
                transport=transport,
                headers=dict(headers or {}),
                verify=verify,
                http2=False,
            )
            for size in sizes
        ]
        self._sizes = sizes
        self._busy = [0] * len(sizes)

    async def __aenter__(self) -> StreamingClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await asyncio.gather(*(shard.aclose() for shard in self._shards))

    def _pick(self) -> int:
        """The shard with the most free connections."""
        best, best_free = 0, self._sizes[0] - self._busy[0]
        for i in range(1, len(self._sizes)):
            free = self._sizes[i] - self._busy[i]
            if free > best_free:
                best, best_free = i, free
        return best

    async def warm_connections(self, n: int, path: str = "/health") -> None:
        """Open up to ``n`` keep-alive connections (concurrent GETs of ``path``, spread over the shards);
        failures are ignored here (the first real request will report them)."""

        async def one(shard: httpx.AsyncClient) -> None:
            try:
                response = await shard.get(path)
                await response.aclose()
            except httpx.HTTPError:
                pass

        todo: list[Coroutine[Any, Any, None]] = []
        left = min(n, self.max_connections)
        for shard, size in zip(self._shards, self._sizes, strict=True):
            take = min(size, left)
            todo += [one(shard) for _ in range(take)]
            left -= take
        await asyncio.gather(*todo)

    async def send(self, spec: RequestSpec) -> RequestResult:
        """One request. A keep-alive connection the server closed just as it was reused (it disconnects without a
        response: no status, no byte) never carried the request to it; the request is sent once more, on a fresh
        connection, and its timestamps are the second attempt's (``t_start_ns`` stays the first call's)."""
        result, stale = await self._send_once(spec)
        if not stale:
            return result
        retry, _ = await self._send_once(spec)
        retry.t_start_ns = result.t_start_ns
        if not retry.ok and retry.error:
            retry.error = _truncate(f"{retry.error} (second attempt, after: {result.error})")
        return retry

    async def _send_once(self, spec: RequestSpec) -> tuple[RequestResult, bool]:
        path, body = build_request(spec, continuous_usage=self._continuous_usage)
        content = json.dumps(body).encode()
        request_headers = {"content-type": "application/json", "accept": "text/event-stream"}
        state = _StreamState(spec.api, keep_text=self._tokenizer is not None)
        decoder = SSEDecoder()
        status: int | None = None
        kind: str | None = None
        message: str | None = None
        wire: list[int] = []
        head = b""  # the first bytes of the body, for a diagnostic when it is not an event stream
        stale = False  # the server closed a reused connection without answering: it never saw the request
        events = 0

        async def trace(name: str, info: Mapping[str, Any]) -> None:
            if name == "http11.send_request_headers.started" and not wire:
                wire.append(perf_counter_ns())

        t_start = perf_counter_ns()
        shard = self._pick()
        self._busy[shard] += 1
        try:
            async with asyncio.timeout(self._timeout_s):
                async with self._shards[shard].stream(
                    "POST", path, content=content, headers=request_headers, extensions={"trace": trace}
                ) as response:
                    status = response.status_code
                    if status >= 400:
                        raw = await response.aread()
                        kind = "http_4xx" if status < 500 else "http_5xx"
                        message = f"HTTP {status}: {_error_text(raw)}"
                    else:
                        async for chunk in response.aiter_bytes():
                            now = perf_counter_ns()
                            if len(head) < 200:
                                head += chunk[: 200 - len(head)]
                            for event in decoder.feed(chunk):
                                state.on_event(event, now)
                                events += 1
                        now = perf_counter_ns()
                        for event in decoder.close():
                            state.on_event(event, now)
                            events += 1
                        if events == 0:
                            content_type = response.headers.get("content-type", "none")
                            raise _StreamError(
                                "bad_response",
                                f"expected a text/event-stream of 'data:' events, got content-type {content_type}: "
                                f"{_truncate(head.decode('utf-8', 'replace'), 160) or '(empty body)'}",
                            )
        except _StreamError as exc:
            kind, message = exc.kind, str(exc)
        except TimeoutError:
            kind, message = "timeout", f"no complete response within the request timeout of {self._timeout_s:g} s"
        except httpx.TimeoutException as exc:
            kind, message = "timeout", f"{type(exc).__name__}: {exc}"
        except httpx.ConnectError as exc:
            kind, message = "connect", f"cannot connect to {self.base_url}: {exc}"
        except httpx.TransportError as exc:  # connected, then the connection broke (before or during the answer)
            kind = "stream_broken"
            before = "" if status is not None else "the connection broke before the response: "
            message = f"{before}{type(exc).__name__}: {exc}"
            stale = status is None and isinstance(exc, httpx.RemoteProtocolError) and not head
        except httpx.HTTPError as exc:  # e.g. a body that fails its content-encoding
            kind, message = "bad_response", f"{type(exc).__name__}: {exc}"
        finally:
            self._busy[shard] -= 1
        t_done = perf_counter_ns()
        t_sent = wire[0] if wire else t_start
        if kind is None and not state.done and state.finish_reason is None:
            kind, message = "stream_broken", "stream ended without [DONE] or a finish_reason"
        if kind is None and not state.chunk_times:
            kind, message = "no_tokens", f"the response carried no generated text (finish_reason={state.finish_reason})"
        result = self._result(state, t_sent, t_done, status, kind, message, spec)
        result.t_start_ns = t_start
        return result, stale

    def _result(
        self,
        state: _StreamState,
        t_sent: int,
        t_done: int,
        status: int | None,
        kind: str | None,
        message: str | None,
        spec: RequestSpec,
    ) -> RequestResult:
        output, inputs = state.output_tokens, state.input_tokens
        source = "unknown"
        if output is not None:
            source = "server_meta_info" if spec.api == "generate" else "server_usage"
        elif self._tokenizer is not None and state.text_parts:
            output = self._tokenizer("".join(state.text_parts))
            source = "tokenizer"
        input_source = "unknown"
        if inputs is not None:
            input_source = "server_meta_info" if spec.api == "generate" else "server_usage"
        elif self._tokenizer is not None and isinstance(spec.prompt, str):
            inputs = self._tokenizer(spec.prompt)
            input_source = "tokenizer"
        times = state.chunk_times
        return RequestResult(
            ok=kind is None,
            t_sent_ns=t_sent,
            t_first_ns=times[0] if times else None,
            t_last_ns=times[-1] if times else None,
            t_done_ns=t_done,
            chunk_times_ns=times,
            chunk_tokens=state.chunk_tokens if state.chunk_tokens_known and times else None,
            output_tokens=output,
            input_tokens=inputs,
            token_source=source,
            finish_reason=state.finish_reason,
            draft_tokens=state.draft,
            accepted_tokens=state.accepted,
            verify_steps=state.verify_steps,
            error_kind=kind,
            error=_truncate(message) if message else None,
            status_code=status,
            input_token_source=input_source,
            cached_tokens=state.cached,
            cached_source=state.cached_source,
            draft_source=state.draft_source,
            server_accept_rate=state.accept_rate,
            server_accept_length=state.accept_length,
            stream_mode=state.ids.mode,
            decoded_chars=state.decoded_chars,
        )


def _error_text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        return _truncate(text) or "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if key in err:
                    return _truncate(str(err[key]))
        elif isinstance(err, str):
            return _truncate(err)
    return _truncate(text)
