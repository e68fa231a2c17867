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
  parse cost stays linear in tokens (``bench.runner._native``). Token counts are ``meta_info.completion_tokens``.
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
from time import perf_counter_ns
from typing import Any

import httpx

from ._sse import SSEDecoder
from ._stream import StreamError, StreamState
from .request import RequestResult, RequestSpec, build_request, one_line

__all__ = ["StreamingClient"]


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
            retry.error = one_line(f"{retry.error} (second attempt, after: {result.error})")
        return retry

    async def _send_once(self, spec: RequestSpec) -> tuple[RequestResult, bool]:
        path, body = build_request(spec, continuous_usage=self._continuous_usage)
        content = json.dumps(body).encode()
        request_headers = {"content-type": "application/json", "accept": "text/event-stream"}
        state = StreamState(spec.api, keep_text=self._tokenizer is not None)
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
                            raise StreamError(
                                "bad_response",
                                f"expected a text/event-stream of 'data:' events, got content-type {content_type}: "
                                f"{one_line(head.decode('utf-8', 'replace'), 160) or '(empty body)'}",
                            )
        except StreamError as exc:
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
        state: StreamState,
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
            error=one_line(message) if message else None,
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
        return one_line(text) or "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if key in err:
                    return one_line(str(err[key]))
        elif isinstance(err, str):
            return one_line(err)
    return one_line(text)
