"""A streaming OpenAI-compatible test server whose timing is known exactly: a measuring instrument, not an engine.

Chunk ``k`` (0-based) of a streamed response is written at the absolute deadline ``t0 + ttft + k * itl``, ``t0``
being the moment the request body was read. Each chunk carries ``tokens_per_chunk`` tokens (the last one the
remainder), as a speculative engine's chunks do. So, for ``n`` output tokens in ``C`` chunks:

* TTFT = ``ttft_ms``; E2E = ``ttft_ms + (C - 1) * itl_ms``; TPOT = ``(C - 1) * itl_ms / (n - 1)``;
* per-token ITL of chunk ``k >= 1`` = ``itl_ms / tokens(k)``, once per token of that chunk.

:func:`expected_timing` returns this truth. Timer precision: asyncio's default epoll loop wakes timers on
millisecond boundaries (up to ~1 ms late); :func:`precise_event_loop` (``select()``, microsecond timeouts, at most
~1000 sockets) is what the command line uses by default and what tests should use. On an epoll loop ``spin_us``
makes the server yield-spin that long before each deadline instead (costs CPU). The lateness of every chunk is
recorded and served at ``GET /stats`` (``POST /stats/reset`` clears it), with the peak number of streams in flight.

Fault modes (each named in ``tests/runner/fault_cases.py`` with the harness's expected outcome): per request or
for the whole server, ``fail_status`` (every generation answered with that HTTP status), ``fail_after_chunks`` with
``fail_mode`` (the stream is cut, or ends with an error event), ``hang_after_chunks`` (the stream stops sending
tokens but stays open, with an SSE comment every half second, so only a total per-request timeout ends it),
``bad_body`` (``html``: a 200 answer with an HTML page, as a proxy gives; ``malformed_sse``: events that are not
JSON), ``max_streams`` (503 while that many streams are in flight: a server over capacity) and ``ready=False``
(``/health`` answers 503 forever). The command line adds process faults:
``--exit-at-start STATUS`` (exits before listening), ``--die-after-requests N`` (the process SIGKILLs itself when
the N-th generation request arrives, cutting every stream in flight) and ``--ignore-sigterm`` (SIGTERM and SIGINT
are ignored, so only SIGKILL stops it).

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /generate`` (SGLang 0.5.17's native layout:
``text``, ``output_ids`` and ``meta_info``, cumulative by default, incremental with ``incremental_output``),
``GET /health``, ``GET /v1/models``, ``GET /stats``. Every response carries the header
``x-benchbook-test-server: 1``; ``/v1/models`` says ``owned_by: benchbook-testserver``. A request may override any
:class:`TestServerConfig` field with a ``"benchbook_test": {...}`` object in its JSON body.

Run: ``python -m bench.testserver --port 8000 --ttft-ms 50 --itl-ms 10 --tokens-per-chunk 3 --output-tokens 64``.
Raw asyncio HTTP/1.1 (keep-alive, chunked transfer), standard library only. Binds to 127.0.0.1 by default.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import selectors
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any, Literal

__all__ = [
    "HEADER",
    "ServerStats",
    "StreamLog",
    "TestServer",
    "TestServerConfig",
    "Truth",
    "chunk_plan",
    "expected_timing",
    "main",
    "precise_event_loop",
    "serve",
]

HEADER = "x-benchbook-test-server"
SERVER_NAME = "benchbook-testserver"
_MAX_LATENESS_SAMPLES = 2_000_000
_MAX_STREAM_LOGS = 10_000


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


def precise_event_loop() -> asyncio.AbstractEventLoop:
    """An event loop on ``select()``: timers wake within microseconds (epoll rounds up to milliseconds).
    ``select()`` handles file descriptors below 1024 only: enough for a few hundred connections."""
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


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


@dataclass
class StreamLog:
    """What the server really did for one streamed request, on ``time.perf_counter_ns`` (CLOCK_MONOTONIC on
    Linux, so comparable with a client's timestamps, even across processes)."""

    api: str
    t0_ns: int  # request body read: the schedule's origin
    emit_ns: list[int] = field(default_factory=list)  # just before each content chunk was written
    chunk_tokens: list[int] = field(default_factory=list)


@dataclass
class ServerStats:
    requests: int = 0
    connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    chunks: int = 0
    lateness_ns: list[int] = field(default_factory=list)
    streams: list[StreamLog] = field(default_factory=list)  # the first _MAX_STREAM_LOGS streams

    def as_json(self) -> dict[str, Any]:
        late = sorted(self.lateness_ns)

        def q(p: float) -> float | None:
            return late[min(len(late) - 1, int(p * len(late)))] / 1e6 if late else None

        return {
            "requests": self.requests,
            "connections": self.connections,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "chunks": self.chunks,
            "streams_logged": len(self.streams),
            "lateness_ms": {"n": len(late), "p50": q(0.5), "p99": q(0.99), "max": late[-1] / 1e6 if late else None},
        }


class _BadRequest(Exception):
    pass


def _words(n: int, start: int = 0) -> str:
    return "".join(f" w{i}" for i in range(start, start + n))


def _prompt_words(body: dict[str, Any]) -> list[str]:
    """The prompt as the test server counts it: one token per whitespace-separated word."""
    if "messages" in body:
        messages = body["messages"]
        if not isinstance(messages, list):
            raise _BadRequest("'messages' must be a list")
        return [w for m in messages if isinstance(m, dict) for w in str(m.get("content", "")).split()]
    prompt = body.get("prompt", body.get("text", ""))
    return str(prompt).split()


class PrefixCacheSim:
    """A prefix cache in miniature: a prompt's cached tokens are the words it shares with the start of an earlier
    prompt (the longest such prefix), at most all but the last word, as a radix cache computes at least one
    token. Earlier prompts are looked up by their first word (the last ``per_word`` prompts for each)."""

    def __init__(self, per_word: int = 64) -> None:
        self._by_first: dict[str, list[tuple[str, ...]]] = {}
        self._per_word = per_word

    def cached(self, words: Sequence[str]) -> int:
        prompt = tuple(words)
        if not prompt:
            return 0
        seen = self._by_first.setdefault(prompt[0], [])
        best = 0
        for earlier in seen:
            n = 0
            for a, b in zip(prompt, earlier, strict=False):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        seen.append(prompt)
        del seen[: -self._per_word]
        return min(best, len(prompt) - 1)


def _overrides(config: TestServerConfig, body: dict[str, Any]) -> TestServerConfig:
    extra = body.get("benchbook_test")
    if extra is None:
        return config
    if not isinstance(extra, dict):
        raise _BadRequest("'benchbook_test' must be an object")
    names = {f.name for f in dataclasses.fields(TestServerConfig)}
    unknown = sorted(set(extra) - names)
    if unknown:
        raise _BadRequest(f"unknown benchbook_test fields: {unknown}")
    try:
        return dataclasses.replace(config, **extra)
    except (TypeError, ValueError) as exc:
        raise _BadRequest(f"bad benchbook_test: {exc}") from None


def _sse(obj: Any) -> bytes:
    payload = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(payload), payload)


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


def _response_head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", f"server: {SERVER_NAME}", f"{HEADER}: 1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class TestServer:
    """The server; use :func:`serve` in tests, or ``start()``/``close()``."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        config: TestServerConfig | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        die_after_requests: int | None = None,
    ) -> None:
        """``die_after_requests``: SIGKILL this very process when that many generation requests have arrived
        (the command line's ``--die-after-requests``; never use it in a test process)."""
        self.config = config or TestServerConfig()
        self.host = host
        self.port = port
        self.die_after_requests = die_after_requests
        self.generation_requests = 0
        self.stats = ServerStats()
        self.prefix_cache = PrefixCacheSim()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    # -- connection handling ------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self.stats.connections += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # close() cancels open connections; ending normally keeps asyncio's callback quiet
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            await self._json(writer, 400, {"error": {"message": "bad request line"}}, keep_alive=False)
            return False
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            await self._json(writer, 400, {"error": {"message": "chunked request bodies unsupported"}}, False)
            return False
        length = int(headers.get("content-length", "0") or "0")
        raw = await reader.readexactly(length) if length else b""
        t0 = asyncio.get_running_loop().time()
        t0_ns = perf_counter_ns()
        keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        path = target.split("?", 1)[0]
        if method == "GET" and path == "/health":
            ready = self.config.ready
            await self._json(writer, 200 if ready else 503, {"status": "ok" if ready else "loading"}, keep_alive)
        elif method == "GET" and path == "/v1/models":
            model = {"id": self.config.model, "object": "model", "owned_by": SERVER_NAME, "benchbook_test_server": True}
            await self._json(writer, 200, {"object": "list", "data": [model]}, keep_alive)
        elif method == "GET" and path == "/stats":
            await self._json(writer, 200, self.stats.as_json(), keep_alive)
        elif method == "POST" and path == "/stats/reset":
            self.stats = ServerStats(in_flight=self.stats.in_flight)
            await self._json(writer, 200, {"reset": True}, keep_alive)
        elif path in ("/v1/chat/completions", "/v1/completions", "/generate"):
            if method != "POST":
                await self._json(writer, 405, {"error": {"message": "use POST"}}, keep_alive)
                return keep_alive
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise _BadRequest("the body must be a JSON object")
                return await self._generate(writer, path, body, (t0, t0_ns), keep_alive)
            except (ValueError, _BadRequest) as exc:
                await self._json(writer, 400, {"error": {"message": str(exc), "type": "invalid_request"}}, keep_alive)
        else:
            await self._json(writer, 404, {"error": {"message": f"no route {method} {path}"}}, keep_alive)
        return keep_alive

    async def _json(self, writer: asyncio.StreamWriter, status: int, obj: Any, keep_alive: bool) -> None:
        payload = json.dumps(obj).encode()
        headers = {
            "content-type": "application/json",
            "content-length": str(len(payload)),
            "connection": "keep-alive" if keep_alive else "close",
        }
        writer.write(_response_head(status, headers) + payload)
        await writer.drain()

    async def _sleep_until(self, deadline: float, spin_s: float) -> None:
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        if remaining > spin_s:
            await asyncio.sleep(remaining - spin_s)
        while spin_s and loop.time() < deadline:
            await asyncio.sleep(0)
        if len(self.stats.lateness_ns) < _MAX_LATENESS_SAMPLES:
            self.stats.lateness_ns.append(int((loop.time() - deadline) * 1e9))

    # -- generation ---------------------------------------------------------------------------------------
    async def _generate(
        self,
        writer: asyncio.StreamWriter,
        path: str,
        body: dict[str, Any],
        origin: tuple[float, int],
        keep_alive: bool,
    ) -> bool:
        t0 = origin[0]
        cfg = _overrides(self.config, body)
        api = {"/v1/chat/completions": "chat", "/v1/completions": "completions", "/generate": "generate"}[path]
        sampling = body.get("sampling_params") if api == "generate" else body
        if not isinstance(sampling, dict):
            raise _BadRequest("'sampling_params' must be an object")
        max_tokens = sampling.get("max_new_tokens" if api == "generate" else "max_tokens", cfg.output_tokens)
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise _BadRequest("max_tokens must be a positive integer")
        ignore_eos = bool(sampling.get("ignore_eos", False))
        words = _prompt_words(body)
        prompt_tokens = len(words)
        cached = self.prefix_cache.cached(words) if cfg.prefix_cache else None
        if cfg.cached_tokens is not None:
            cached = min(cfg.cached_tokens, prompt_tokens)
        self.stats.requests += 1
        self.generation_requests += 1
        if self.die_after_requests is not None and self.generation_requests >= self.die_after_requests:
            os.kill(os.getpid(), signal.SIGKILL)
        if cfg.fail_status is not None:
            message = cfg.fail_message or f"test server configured to fail with {cfg.fail_status}"
            error = {"error": {"message": message, "type": "test"}}
            await self._json(writer, cfg.fail_status, error, keep_alive)
            return keep_alive
        if cfg.bad_body is not None:
            await self._bad_body(writer, cfg.bad_body, keep_alive)
            return keep_alive
        if cfg.max_streams is not None and self.stats.in_flight >= cfg.max_streams:
            busy = {"error": {"message": f"over capacity: {cfg.max_streams} streams in flight", "type": "test"}}
            await self._json(writer, 503, busy, keep_alive)
            return keep_alive
        truth = expected_timing(cfg, max_tokens, ignore_eos)
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            if not body.get("stream", False):
                await self._sleep_until(t0 + truth.e2e_ms / 1e3, cfg.spin_us / 1e6)
                await self._json(writer, 200, _whole(api, cfg, truth, prompt_tokens, cached), keep_alive)
                return keep_alive
            return await self._stream(writer, api, body, cfg, truth, (prompt_tokens, cached), origin, keep_alive)
        finally:
            self.stats.in_flight -= 1

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        api: str,
        body: dict[str, Any],
        cfg: TestServerConfig,
        truth: Truth,
        prompt: tuple[int, int | None],
        origin: tuple[float, int],
        keep_alive: bool,
    ) -> bool:
        t0, t0_ns = origin
        options = body.get("stream_options") or {}
        include_usage = cfg.usage and api != "generate" and bool(options.get("include_usage"))
        continuous = cfg.usage and api != "generate" and bool(options.get("continuous_usage_stats"))
        headers = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "connection": "keep-alive" if keep_alive else "close",
        }
        log = StreamLog(api, t0_ns)
        if len(self.stats.streams) < _MAX_STREAM_LOGS:
            self.stats.streams.append(log)
        writer.write(_response_head(200, headers))
        events = _Events(api, cfg, truth, prompt, continuous)
        if cfg.role_chunk and api == "chat":
            writer.write(_sse(events.role()))
        await writer.drain()
        spin = cfg.spin_us / 1e6
        for k, size in enumerate(truth.chunk_tokens):
            if cfg.hang_after_chunks is not None and k == cfg.hang_after_chunks:
                await _hang(writer)
                return False
            if cfg.fail_after_chunks is not None and k == cfg.fail_after_chunks:
                if cfg.fail_mode == "close":
                    writer.close()  # no terminating chunk: the client sees an incomplete body
                    return False
                message = cfg.fail_message or "test server: injected failure mid-stream"
                writer.write(_sse({"error": {"message": message, "code": 500}}))
                writer.write(_sse(b"[DONE]") + b"0\r\n\r\n")
                await writer.drain()
                return keep_alive
            await self._sleep_until(t0 + truth.chunk_offsets_ms[k] / 1e3, spin)
            if writer.transport.is_closing():
                return False
            log.emit_ns.append(perf_counter_ns())
            log.chunk_tokens.append(size)
            writer.write(_sse(events.content(k, size)))
            self.stats.chunks += 1
            await writer.drain()
        tail = b""
        if api != "generate":
            tail += _sse(events.finish())
            if include_usage:
                tail += _sse(events.usage())
        writer.write(tail + _sse(b"[DONE]") + b"0\r\n\r\n")
        await writer.drain()
        return keep_alive

    async def _bad_body(self, writer: asyncio.StreamWriter, kind: str, keep_alive: bool) -> None:
        connection = "keep-alive" if keep_alive else "close"
        if kind == "html":
            page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Proxy sign-in</h1></body></html>"
            headers = {"content-type": "text/html", "content-length": str(len(page)), "connection": connection}
            writer.write(_response_head(200, headers) + page)
        else:
            headers = {"content-type": "text/event-stream", "transfer-encoding": "chunked", "connection": connection}
            broken = b'{"id": "cmpl-benchbook-test", "choices": [{"delta": {"content": " w0"'  # cut-off JSON
            writer.write(_response_head(200, headers) + _sse(broken) + _sse(b"[DONE]") + b"0\r\n\r\n")
        await writer.drain()


async def _hang(writer: asyncio.StreamWriter, interval_s: float = 0.5) -> None:
    """Send no more tokens, but keep the stream open (an SSE comment now and then) until the client leaves."""
    while not writer.transport.is_closing():
        writer.write(_sse_comment(b"still working"))
        await writer.drain()  # raises ConnectionError once the client has gone
        await asyncio.sleep(interval_s)


def _sse_comment(text: bytes) -> bytes:
    payload = b": " + text + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(payload), payload)


class _Events:
    """The JSON payloads of one streamed response."""

    def __init__(
        self, api: str, cfg: TestServerConfig, truth: Truth, prompt: tuple[int, int | None], continuous: bool
    ) -> None:
        self.api, self.cfg, self.truth, self.continuous = api, cfg, truth, continuous
        self.prompt_tokens, self.cached = prompt
        self.sent = 0
        self.id = "cmpl-benchbook-test"

    def _usage(self) -> dict[str, Any]:
        return _usage(self.prompt_tokens, self.sent, self.cached)

    def _choice(self, text: str | None, finish: str | None, role: bool = False) -> dict[str, Any]:
        if self.api == "chat":
            delta: dict[str, str] = {"role": "assistant"} if role else {}
            if text is not None:
                delta["content"] = text
            return {"index": 0, "delta": delta, "finish_reason": finish}
        return {"index": 0, "text": text or "", "finish_reason": finish}

    def _envelope(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self.api == "chat" else "text_completion"
        obj: dict[str, Any] = {"id": self.id, "object": kind, "model": self.cfg.model, "choices": choices}
        if self.continuous:
            obj["usage"] = self._usage()
        return obj

    def role(self) -> dict[str, Any]:
        return self._envelope([self._choice(None, None, role=True)])

    def content(self, k: int, size: int) -> dict[str, Any]:
        start = self.sent
        self.sent += size
        if self.api != "generate":
            return self._envelope([self._choice(_words(size, start), None)])
        last = k == len(self.truth.chunk_tokens) - 1
        first = start if self.cfg.incremental_output else 0
        meta = _sglang_meta(self.cfg, self.truth, self.prompt_tokens, self.cached, self.sent, k + 1, last)
        return {
            "text": _words(self.sent - first, first),
            "output_ids": list(range(first, self.sent)),
            "meta_info": meta,
        }

    def finish(self) -> dict[str, Any]:
        obj = self._envelope([self._choice(None if self.api == "chat" else "", self.truth.finish_reason)])
        if self.cfg.draft_tokens_per_step is not None:  # llama.cpp's per-request timings
            steps = len(self.truth.chunk_tokens)
            obj["timings"] = {
                "predicted_n": self.sent,
                "draft_n": steps * self.cfg.draft_tokens_per_step,
                "draft_n_accepted": self.sent - steps,
            }
            if self.cached is not None:
                obj["timings"]["cache_n"] = self.cached
        return obj

    def usage(self) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self.api == "chat" else "text_completion"
        return {"id": self.id, "object": kind, "model": self.cfg.model, "choices": [], "usage": self._usage()}


def _usage(prompt_tokens: int, completion_tokens: int, cached: int | None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def _sglang_meta(
    cfg: TestServerConfig, truth: Truth, prompt_tokens: int, cached: int | None, sent: int, steps: int, last: bool
) -> dict[str, Any]:
    """``meta_info`` as SGLang 0.5.17 streams it (keys and order from tests/runner/fixtures/sglang/); the
    speculative counters are cumulative, one verify step per chunk, ``tokens - 1`` accepted drafts per step."""
    finish: dict[str, Any] | None = None
    if last:
        finish = {"type": "length", "length": sent} if truth.finish_reason == "length" else {"type": "stop"}
    meta: dict[str, Any] = {"id": "benchbook-test", "finish_reason": finish, "prompt_tokens": prompt_tokens}
    if cfg.usage:
        meta["completion_tokens"] = sent
    if cached is not None:
        meta["cached_tokens"] = cached
    if cfg.draft_tokens_per_step is not None:
        proposed, accepted = steps * cfg.draft_tokens_per_step, sent - steps
        meta.update(
            spec_accept_rate=accepted / proposed if proposed else 0.0,
            spec_accept_length=sent / steps,
            spec_num_correct_drafts=accepted,
            spec_num_proposed_drafts=proposed,
            spec_verify_ct=steps,
            spec_accepted_drafts=accepted,
            spec_proposed_drafts=proposed,
        )
    return meta


def _whole(api: str, cfg: TestServerConfig, truth: Truth, prompt_tokens: int, cached: int | None) -> dict[str, Any]:
    n = truth.output_tokens
    if api == "generate":
        meta = _sglang_meta(cfg, truth, prompt_tokens, cached, n, len(truth.chunk_tokens), True)
        return {"text": _words(n), "output_ids": list(range(n)), "meta_info": meta}
    if api == "chat":
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": _words(n)}}
    else:
        choice = {"index": 0, "text": _words(n)}
    choice["finish_reason"] = truth.finish_reason
    obj: dict[str, Any] = {"id": "cmpl-benchbook-test", "model": cfg.model, "choices": [choice]}
    if cfg.usage:
        obj["usage"] = _usage(prompt_tokens, n, cached)
    return obj


@contextlib.asynccontextmanager
async def serve(
    config: TestServerConfig | None = None, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[TestServer]:
    """Run a test server on the current event loop for the duration of the ``async with`` block."""
    server = TestServer(config, host, port)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.testserver", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0: pick a free port (printed on stdout)")
    p.add_argument("--ttft-ms", type=float, default=50.0)
    p.add_argument("--itl-ms", type=float, default=10.0, help="time between consecutive chunks")
    p.add_argument("--tokens-per-chunk", type=int, default=1)
    p.add_argument("--output-tokens", type=int, default=64)
    p.add_argument("--no-usage", action="store_true", help="never report token counts")
    p.add_argument("--fail-after-chunks", type=int, default=None)
    p.add_argument("--fail-mode", choices=["close", "error_event"], default="close")
    p.add_argument("--fail-status", type=int, default=None)
    p.add_argument("--fail-message", default=None, help="the message of injected errors (default: says it is a test)")
    p.add_argument("--role-chunk", action="store_true", help="chat: send a role-only chunk before the first token")
    p.add_argument(
        "--draft-tokens-per-step",
        type=int,
        default=None,
        help="report draft counts (llama.cpp timings, SGLang meta_info)",
    )
    p.add_argument(
        "--incremental-output",
        action="store_true",
        help="/generate: only new text and ids per chunk (SGLang --incremental-streaming-output)",
    )
    p.add_argument("--cached-tokens", type=int, default=None, help="report this many cached prompt tokens")
    p.add_argument("--prefix-cache", action="store_true", help="simulate a prefix cache and report its hits")
    p.add_argument("--model", default=SERVER_NAME)
    p.add_argument(
        "--loop",
        choices=["select", "epoll"],
        default="select",
        help="select: microsecond timers, "
        "fewer than ~1000 connections; epoll: asyncio's default, millisecond timers, no fd limit",
    )
    p.add_argument("--spin-us", type=int, default=0, help="yield-spin this long before each deadline (epoll)")
    faults = p.add_argument_group("fault modes (see tests/runner/fault_cases.py)")
    faults.add_argument("--hang-after-chunks", type=int, default=None, help="stop sending tokens, keep streams open")
    faults.add_argument("--bad-body", choices=["html", "malformed_sse"], default=None)
    faults.add_argument("--never-ready", action="store_true", help="/health answers 503 forever")
    faults.add_argument("--max-streams", type=int, default=None, help="answer 503 while this many streams run")
    faults.add_argument("--exit-at-start", type=int, default=None, metavar="STATUS", help="exit before listening")
    faults.add_argument("--die-after-requests", type=int, default=None, metavar="N", help="SIGKILL itself at request N")
    faults.add_argument("--ignore-sigterm", action="store_true", help="only SIGKILL stops it")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = TestServerConfig(
            ttft_ms=args.ttft_ms,
            itl_ms=args.itl_ms,
            tokens_per_chunk=args.tokens_per_chunk,
            output_tokens=args.output_tokens,
            usage=not args.no_usage,
            fail_after_chunks=args.fail_after_chunks,
            fail_mode=args.fail_mode,
            fail_status=args.fail_status,
            fail_message=args.fail_message,
            role_chunk=args.role_chunk,
            draft_tokens_per_step=args.draft_tokens_per_step,
            incremental_output=args.incremental_output,
            cached_tokens=args.cached_tokens,
            prefix_cache=args.prefix_cache,
            model=args.model,
            spin_us=args.spin_us,
            hang_after_chunks=args.hang_after_chunks,
            bad_body=args.bad_body,
            ready=not args.never_ready,
            max_streams=args.max_streams,
        )
    except ValueError as exc:
        print(f"bench.testserver: {exc}", file=sys.stderr)
        return 2
    if args.exit_at_start is not None:
        print(
            f"{SERVER_NAME}: fatal: injected start-up failure (--exit-at-start {args.exit_at_start})", file=sys.stderr
        )
        return int(args.exit_at_start)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # before listening: a signal sent once it listens is handled
            if args.ignore_sigterm:
                signal.signal(sig, signal.SIG_IGN)
            else:
                loop.add_signal_handler(sig, stop.set)
        server = TestServer(config, args.host, args.port, die_after_requests=args.die_after_requests)
        await server.start()
        print(f"{SERVER_NAME} listening on {server.url}", flush=True)
        await stop.wait()
        await server.close()

    with asyncio.Runner(loop_factory=precise_event_loop if args.loop == "select" else None) as runner:
        runner.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
