"""The streaming HTTP client: sends one generation request and timestamps every token-bearing chunk.

One :class:`StreamingClient` (keep-alive connections, a connection limit at least the concurrency: see the class)
is shared by a whole run, so TCP setup does not land inside TTFT.
Measurement rules (``shared/MEASUREMENT.md``):

* ``t_first_ns`` is the first chunk carrying non-empty generated text (content or reasoning). A role-only chunk,
  a finish-only chunk, a usage-only chunk and ``[DONE]`` carry no token.
* Output tokens come from the server (``usage.completion_tokens``; SGLang native ``meta_info.completion_tokens``),
  else from the ``tokenizer`` callable if one was given, else they are unknown (None): never ``max_tokens`` and
  never the number of chunks.
* ``t_sent_ns`` is taken just before the request's bytes go to the socket (the lean transport's ``Sink.sent``;
  under httpx, httpcore's ``trace`` extension), so request building, a wait for a pooled connection and TCP setup
  are not inside TTFT; ``t_start_ns`` (``send()`` called) keeps that client overhead visible. A transport without
  the trace (``httpx.MockTransport``) gets ``t_sent_ns = t_start_ns``.
* A chunk's time is taken when its bytes come off the socket, before any of them is parsed (lean transport: one
  ``perf_counter_ns`` per socket read, in ``data_received``; httpx: as httpx yields the chunk).
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

from ._http1 import BrokenResponse, ConnectFailed, Stale, lean_origin
from ._response import ResponseReader
from ._stream import StreamError, StreamState
from .request import RequestResult, RequestSpec, build_request, one_line

__all__ = ["StreamingClient"]


class StreamingClient:
    """The run's one HTTP client: keep-alive connections, at most ``max_connections`` (at least the concurrency).

    Plain ``http://`` goes over the lean HTTP/1.1 transport :mod:`bench.runner._http1` (one
    :class:`asyncio.Protocol` per connection, no coroutine per chunk; measured with ``benchmarks/clients.py``:
    see ``benchmarks/README.md``). ``https://``, a proxy from the environment, a URL with credentials or a query,
    and a custom ``transport`` go over httpx.

    Under httpx the connections are split over pools of ``shard_size`` connections, each an ``httpx.AsyncClient``,
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
        self._lean = (
            None
            if transport is not None
            else lean_origin(
                root,
                headers or {},
                limit=max_connections,
                connect_timeout_s=timeout_s,
                keepalive_expiry_s=keepalive_expiry_s,
            )
        )
        sizes: list[int] = []  # httpx pools (none under the lean transport)
        if transport is not None:
            sizes = [max_connections]
        elif self._lean is None:
            full, rest = divmod(max_connections, shard_size)
            sizes = [shard_size] * full + ([rest] if rest else [])
        # one SSL context shared by the pools; certificates are loaded (~50 ms) only for https
        verify = httpx.create_ssl_context(verify=root.startswith("https:")) if sizes else False
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

    @property
    def transport_name(self) -> str:
        """``"http1"`` (the lean transport) or ``"httpx"``."""
        return "httpx" if self._lean is None else "http1"

    async def __aenter__(self) -> StreamingClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.pool.aclose()
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

        if self._lean is not None:
            await self._lean.pool.warm(n, self._lean.get(path), _Discard)
            return
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
        result, stale = await self._send_once(spec, fresh=False)
        if not stale:
            return result
        retry, _ = await self._send_once(spec, fresh=True)
        retry.t_start_ns = result.t_start_ns
        if not retry.ok and retry.error:
            retry.error = one_line(f"{retry.error} (second attempt, after: {result.error})")
        return retry

    async def _send_once(self, spec: RequestSpec, *, fresh: bool) -> tuple[RequestResult, bool]:
        path, body = build_request(spec, continuous_usage=self._continuous_usage)
        content = json.dumps(body).encode()
        reader = ResponseReader(spec.api, keep_text=self._tokenizer is not None, decode_encoding=self._lean is not None)
        t_start = perf_counter_ns()
        if self._lean is not None:
            kind, message, stale = await self._lean_send(path, content, reader, fresh)
        else:
            kind, message, stale = await self._httpx_send(path, content, reader)
        t_done = perf_counter_ns()
        state = reader.state
        if kind is None and not state.done and state.finish_reason is None:
            kind, message = "stream_broken", "stream ended without [DONE] or a finish_reason"
        if kind is None and not state.chunk_times:
            kind, message = "no_tokens", f"the response carried no generated text (finish_reason={state.finish_reason})"
        t_sent = reader.sent_ns if reader.sent_ns is not None else t_start
        result = self._result(state, t_sent, t_done, reader.status, kind, message, spec)
        result.t_start_ns = t_start
        return result, stale

    async def _lean_send(
        self, path: str, content: bytes, reader: ResponseReader, fresh: bool
    ) -> tuple[str | None, str | None, bool]:
        """Over :class:`bench.runner._http1.Http1Pool`: ``(error kind, message, stale)``."""
        assert self._lean is not None
        lean = self._lean
        request = lean.post(path, content)
        try:
            async with asyncio.timeout(self._timeout_s):
                await lean.pool.request(request, reader, fresh=fresh)
            found = reader.finish(perf_counter_ns())
        except StreamError as exc:
            return exc.kind, str(exc), False
        except TimeoutError:
            return "timeout", f"no complete response within the request timeout of {self._timeout_s:g} s", False
        except ConnectFailed as exc:
            return "connect", f"cannot connect to {self.base_url}: {exc}", False
        except BrokenResponse as exc:  # connected, then the connection broke, or the answer is not HTTP/1.1
            before = "" if reader.status is not None else "the connection broke before the response: "
            return exc.kind, f"{before}{exc}", isinstance(exc, Stale)
        except OSError as exc:
            return "stream_broken", f"{type(exc).__name__}: {exc}", False
        return (None, None, False) if found is None else (*found, False)

    async def _httpx_send(
        self, path: str, content: bytes, reader: ResponseReader
    ) -> tuple[str | None, str | None, bool]:
        """Over httpx (https, a proxy, a custom transport): ``(error kind, message, stale)``."""
        request_headers = {"content-type": "application/json", "accept": "text/event-stream"}

        async def trace(name: str, info: Mapping[str, Any]) -> None:
            if name == "http11.send_request_headers.started":
                reader.sent(perf_counter_ns())

        shard = self._pick()
        self._busy[shard] += 1
        try:
            async with asyncio.timeout(self._timeout_s):
                async with self._shards[shard].stream(
                    "POST", path, content=content, headers=request_headers, extensions={"trace": trace}
                ) as response:
                    headers = {k.lower(): v for k, v in response.headers.raw if k.lower() != b"content-encoding"}
                    reader.head(response.status_code, headers)
                    async for chunk in response.aiter_bytes():
                        reader.body(perf_counter_ns(), chunk)
            found = reader.finish(perf_counter_ns())
        except StreamError as exc:
            return exc.kind, str(exc), False
        except TimeoutError:
            return "timeout", f"no complete response within the request timeout of {self._timeout_s:g} s", False
        except httpx.TimeoutException as exc:
            return "timeout", f"{type(exc).__name__}: {exc}", False
        except httpx.ConnectError as exc:
            return "connect", f"cannot connect to {self.base_url}: {exc}", False
        except httpx.TransportError as exc:  # connected, then the connection broke (before or during the answer)
            before = "" if reader.status is not None else "the connection broke before the response: "
            stale = reader.status is None and isinstance(exc, httpx.RemoteProtocolError) and not reader.first_bytes
            return "stream_broken", f"{before}{type(exc).__name__}: {exc}", stale
        except httpx.HTTPError as exc:  # e.g. a body that fails its content-encoding
            return "bad_response", f"{type(exc).__name__}: {exc}", False
        finally:
            self._busy[shard] -= 1
        return (None, None, False) if found is None else (*found, False)

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


class _Discard:
    """A sink that ignores the response (warming connections)."""

    def sent(self, now: int) -> None:
        pass

    def head(self, status: int, headers: dict[bytes, bytes]) -> None:
        pass

    def body(self, now: int, data: bytes) -> None:
        pass
