"""The test server itself: raw asyncio HTTP/1.1 (keep-alive, chunked transfer) that writes every chunk at its
scheduled deadline and logs when it really did (:class:`StreamLog`, :class:`ServerStats`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import selectors
import signal
from collections.abc import AsyncIterator
from time import perf_counter_ns
from typing import Any

from ._config import SERVER_NAME, TestServerConfig, Truth, expected_timing
from ._prefix_cache import PrefixCacheSim
from ._stats import MAX_LATENESS_SAMPLES, MAX_STREAM_LOGS, ServerStats, StreamLog
from ._wire import Events, response_head, sse, sse_comment, whole_response

__all__ = ["TestServer", "precise_event_loop", "serve"]


def precise_event_loop() -> asyncio.AbstractEventLoop:
    """An event loop on ``select()``: timers wake within microseconds (epoll rounds up to milliseconds).
    ``select()`` handles file descriptors below 1024 only: enough for a few hundred connections."""
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


class _BadRequest(Exception):
    pass


def _prompt_words(body: dict[str, Any]) -> list[str]:
    """The prompt as the test server counts it: one token per whitespace-separated word."""
    if "messages" in body:
        messages = body["messages"]
        if not isinstance(messages, list):
            raise _BadRequest("'messages' must be a list")
        return [w for m in messages if isinstance(m, dict) for w in str(m.get("content", "")).split()]
    prompt = body.get("prompt", body.get("text", ""))
    return str(prompt).split()


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
        writer.write(response_head(status, headers) + payload)
        await writer.drain()

    async def _sleep_until(self, deadline: float, spin_s: float) -> None:
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        if remaining > spin_s:
            await asyncio.sleep(remaining - spin_s)
        while spin_s and loop.time() < deadline:
            await asyncio.sleep(0)
        if len(self.stats.lateness_ns) < MAX_LATENESS_SAMPLES:
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
                await self._json(writer, 200, whole_response(api, cfg, truth, prompt_tokens, cached), keep_alive)
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
        if len(self.stats.streams) < MAX_STREAM_LOGS:
            self.stats.streams.append(log)
        writer.write(response_head(200, headers))
        events = Events(api, cfg, truth, prompt, continuous)
        if cfg.role_chunk and api == "chat":
            writer.write(sse(events.role()))
        await writer.drain()
        spin = cfg.spin_us / 1e6
        for k, size in enumerate(truth.chunk_tokens):
            if cfg.hang_after_chunks is not None and k == cfg.hang_after_chunks:
                await _hang(writer)
                return False
            if cfg.pause_file is not None and os.path.exists(cfg.pause_file):
                await _hang(writer, while_exists=cfg.pause_file)
                if writer.transport.is_closing():
                    return False
            if cfg.fail_after_chunks is not None and k == cfg.fail_after_chunks:
                if cfg.fail_mode == "close":
                    writer.close()  # no terminating chunk: the client sees an incomplete body
                    return False
                message = cfg.fail_message or "test server: injected failure mid-stream"
                writer.write(sse({"error": {"message": message, "code": 500}}))
                writer.write(sse(b"[DONE]") + b"0\r\n\r\n")
                await writer.drain()
                return keep_alive
            await self._sleep_until(t0 + truth.chunk_offsets_ms[k] / 1e3, spin)
            if writer.transport.is_closing():
                return False
            log.emit_ns.append(perf_counter_ns())
            log.chunk_tokens.append(size)
            writer.write(sse(events.content(k, size)))
            self.stats.chunks += 1
            await writer.drain()
        tail = b""
        if api != "generate":
            tail += sse(events.finish())
            if include_usage:
                tail += sse(events.usage())
        writer.write(tail + sse(b"[DONE]") + b"0\r\n\r\n")
        await writer.drain()
        return keep_alive

    async def _bad_body(self, writer: asyncio.StreamWriter, kind: str, keep_alive: bool) -> None:
        connection = "keep-alive" if keep_alive else "close"
        if kind == "html":
            page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Proxy sign-in</h1></body></html>"
            headers = {"content-type": "text/html", "content-length": str(len(page)), "connection": connection}
            writer.write(response_head(200, headers) + page)
        else:
            headers = {"content-type": "text/event-stream", "transfer-encoding": "chunked", "connection": connection}
            broken = b'{"id": "cmpl-benchbook-test", "choices": [{"delta": {"content": " w0"'  # cut-off JSON
            writer.write(response_head(200, headers) + sse(broken) + sse(b"[DONE]") + b"0\r\n\r\n")
        await writer.drain()


async def _hang(writer: asyncio.StreamWriter, interval_s: float = 0.5, while_exists: str | None = None) -> None:
    """Send no more tokens, but keep the stream open (an SSE comment now and then) until the client leaves, or, given
    ``while_exists``, until that file is gone (checked every 50 ms)."""
    step_s = interval_s if while_exists is None else 0.05
    every = max(1, round(interval_s / step_s))  # steps between two comments
    steps = 0
    while not writer.transport.is_closing() and (while_exists is None or os.path.exists(while_exists)):
        if steps % every == 0:
            writer.write(sse_comment(b"still working"))
            await writer.drain()  # raises ConnectionError once the client has gone
        await asyncio.sleep(step_s)
        steps += 1


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
