"""A lean HTTP/1.1 client transport for streamed responses: the client's hot path without httpx's layers.

Why (profile of the client at C=256 against the zero-delay test server, ``benchmarks/clients.py``): about half of
the client's CPU went to httpx, httpcore and h11 handing each HTTP chunk up through an async iterator (one h11
event, three wrapper generators and a coroutine switch per SSE event), a third to SSE framing and JSON, the rest
to the event loop. Here a connection is an :class:`asyncio.Protocol`; the response head is parsed once, the body
(chunked, ``content-length`` or until close) is de-chunked per socket read, and each read's payload goes to a
:class:`Sink` with one timestamp for the whole read. No coroutine runs per event.

Timestamps before parsing: a read is stamped (``perf_counter_ns``) the moment ``data_received`` has it, and
parsed one loop iteration later (:class:`_Batch`), after every socket that was ready in this iteration has been
read and stamped. When many streams deliver at once (paced streams, a batched engine's decode step), the last
socket's stamp then waits only for the other sockets' reads, not for their parsing as well.

Scope: plain ``http://`` to one origin, keep-alive, at most ``limit`` connections; a connection is reused only
after a response that was read to its end, and not after it sat idle longer than the keep-alive expiry.
:func:`lean_origin` decides: ``https://``, a URL with credentials or a query, a proxy from the environment
(``http_proxy``/``all_proxy`` unless ``no_proxy`` names the host) and custom transports stay with httpx.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import urllib.request
from collections.abc import Mapping
from time import monotonic, perf_counter_ns
from typing import Protocol, cast
from urllib.parse import urlsplit

__all__ = ["BrokenResponse", "ConnectFailed", "Http1Pool", "Origin", "Sink", "Stale", "lean_origin"]

_MAX_HEAD = 64 * 1024


class Sink(Protocol):
    """Receives one response. ``sent`` is called just before the request goes onto the socket, ``body`` once per
    socket read with every body byte that read completed (``now``: that read's ``perf_counter_ns``)."""

    def sent(self, now: int) -> None: ...

    def head(self, status: int, headers: dict[bytes, bytes]) -> None: ...

    def body(self, now: int, data: bytes) -> None: ...


class ConnectFailed(OSError):
    """The connection could not be opened."""


class BrokenResponse(Exception):
    """The connection broke (``kind`` "stream_broken"), or the server sent something that is not HTTP/1.1
    ("bad_response")."""

    def __init__(self, message: str, *, got_bytes: bool, kind: str = "stream_broken") -> None:
        super().__init__(message)
        self.got_bytes = got_bytes
        self.kind = kind


class Stale(BrokenResponse):
    """A reused keep-alive connection closed before a single byte of the answer: the server never saw the
    request (it had closed the idle connection), so sending it again is safe."""


class _Batch:
    """The connections with stamped, unparsed reads; parsed together in the loop's next iteration."""

    __slots__ = ("conns", "scheduled")

    def __init__(self) -> None:
        self.conns: list[_Conn] = []
        self.scheduled = False

    def add(self, conn: _Conn) -> None:
        self.conns.append(conn)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self.scheduled = False
        conns, self.conns = self.conns, []
        for conn in conns:
            conn.drain()


class _Conn(asyncio.Protocol):
    __slots__ = (
        "_batch",
        "_body_left",
        "_buf",
        "_chunk_left",
        "_chunked",
        "_done",
        "_got",
        "_head_done",
        "_pending",
        "_sink",
        "_trailers",
        "closed",
        "idle_since",
        "keep_alive",
        "reused",
        "transport",
    )

    def __init__(self, batch: _Batch) -> None:
        self._batch = batch
        self._pending: list[tuple[int, bytes]] = []
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self._reset(None, None)

    def _reset(self, sink: Sink | None, done: asyncio.Future[None] | None) -> None:
        self._sink, self._done = sink, done
        self._buf = b""
        self._got = False
        self._head_done = False
        self._chunked = False
        self._chunk_left = -1  # -1: expecting a chunk-size line; >= 0: payload bytes left (+ CRLF)
        self._trailers = False
        self._body_left: int | None = None  # content-length left; None: until close (or chunked)
        self.keep_alive = True

    # -- asyncio callbacks ----------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's is not an asyncio.Transport subclass, but has its methods)
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.drain()  # what was read before the close is parsed first
        self.closed = True
        done = self._done
        if done is None or done.done():
            return
        if self._head_done and not self._chunked and self._body_left is None:  # body delimited by the close
            self._finish()
            return
        reason = f"{type(exc).__name__}: {exc}" if exc else "the server closed the connection"
        where = "during the response" if self._got else "before the response"
        error_type = Stale if (self.reused and not self._got) else BrokenResponse
        done.set_exception(error_type(f"{reason} ({where})", got_bytes=self._got))

    def data_received(self, data: bytes) -> None:
        now = perf_counter_ns()
        self._got = True
        if not self._pending:
            self._batch.add(self)
        self._pending.append((now, data))

    def drain(self) -> None:
        """Parse the reads stamped so far."""
        pending, self._pending = self._pending, []
        for now, data in pending:
            self._parse(now, data)

    def _parse(self, now: int, data: bytes) -> None:
        done = self._done
        if done is None or done.done():  # bytes nobody asked for: the connection cannot be trusted any more
            self.keep_alive = False
            if self.transport is not None:
                self.transport.close()
            return
        try:
            if not self._head_done:
                self._buf += data
                end = self._buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._buf) > _MAX_HEAD:
                        raise BrokenResponse("response head over 64 KiB", got_bytes=True, kind="bad_response")
                    return
                head, data = self._buf[:end], self._buf[end + 4 :]
                self._buf = b""
                self._parse_head(head)
                if not data and not self._finished_without_body():
                    return
            payload = self._dechunk(data) if self._chunked else self._plain(data)
            if payload:
                assert self._sink is not None
                self._sink.body(now, payload)
            if self._complete():
                self._finish()
        except BaseException as exc:  # a bad response or a sink that gave up: this connection is done
            self.keep_alive = False
            if not done.done():
                done.set_exception(exc)
            if self.transport is not None:
                self.transport.close()

    # -- parsing ---------------------------------------------------------------------------------------------
    def _parse_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise BrokenResponse(f"not an HTTP/1.x status line: {lines[0][:80]!r}", got_bytes=True, kind="bad_response")
        status = int(parts[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        encoding = headers.get(b"transfer-encoding", b"").lower()
        connection = headers.get(b"connection", b"").lower()
        self.keep_alive = parts[0] == b"HTTP/1.1" and b"close" not in connection
        if b"chunked" in encoding:
            self._chunked = True
        elif b"content-length" in headers:
            try:
                self._body_left = int(headers[b"content-length"])
            except ValueError:
                raise BrokenResponse("content-length is not a number", got_bytes=True, kind="bad_response") from None
        elif status in (204, 304) or 100 <= status < 200:
            self._body_left = 0
        else:
            self.keep_alive = False  # delimited by the close
        self._head_done = True
        assert self._sink is not None
        self._sink.head(status, headers)

    def _finished_without_body(self) -> bool:
        if self._body_left == 0:
            self._finish()
            return True
        return False

    def _plain(self, data: bytes) -> bytes:
        if self._body_left is None:
            return data
        if len(data) > self._body_left:
            raise BrokenResponse("more bytes than content-length", got_bytes=True, kind="bad_response")
        self._body_left -= len(data)
        return data

    def _dechunk(self, data: bytes) -> bytes:
        buf = self._buf + data if self._buf else data
        out: list[bytes] = []
        pos, n = 0, len(buf)
        left = self._chunk_left
        while pos < n:
            if left < 0:  # a size line, or (after the last chunk) trailer lines
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    if n - pos > 1024:
                        raise BrokenResponse("chunk-size line over 1 KiB", got_bytes=True, kind="bad_response")
                    break
                line = buf[pos:eol]
                pos = eol + 2
                if self._trailers:
                    if not line:
                        self._trailers = False
                        left = -2  # the body is complete
                        break
                    continue
                try:
                    size = int(line, 16)
                except ValueError:
                    try:
                        size = int(line.split(b";", 1)[0], 16)
                    except ValueError:
                        raise BrokenResponse(
                            f"bad chunk-size line {line[:40]!r}", got_bytes=True, kind="bad_response"
                        ) from None
                if size == 0:
                    self._trailers = True
                    continue
                left = size + 2  # payload + CRLF
            else:
                end = pos + left
                if end <= n:  # the rest of this chunk is here
                    if left > 2:
                        out.append(buf[pos : end - 2])
                    pos, left = end, -1
                else:
                    if left > 2 and pos < end - 2:
                        out.append(buf[pos : min(n, end - 2)])
                    left -= n - pos
                    pos = n
        self._chunk_left = left
        self._buf = buf[pos:] if pos < n else b""
        if left == -2 and self._buf:
            raise BrokenResponse("bytes after the end of a chunked body", got_bytes=True, kind="bad_response")
        return b"".join(out) if len(out) != 1 else out[0]

    def _complete(self) -> bool:
        if self._chunked:
            return self._chunk_left == -2
        return self._body_left == 0

    def _finish(self) -> None:
        done = self._done
        self._sink, self._done = None, None
        if done is not None and not done.done():
            done.set_result(None)

    # -- use -------------------------------------------------------------------------------------------------
    def start(self, request: bytes, sink: Sink) -> asyncio.Future[None]:
        assert self.transport is not None
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reset(sink, done)
        sink.sent(perf_counter_ns())
        self.transport.write(request)
        return done


class Http1Pool:
    """Keep-alive connections to ``host:port``; at most ``limit`` open at once (callers wait for a free one)."""

    def __init__(
        self, host: str, port: int, limit: int, *, connect_timeout_s: float = 30.0, keepalive_expiry_s: float = 600.0
    ) -> None:
        self.host, self.port, self.limit = host, port, limit
        self._connect_timeout_s = connect_timeout_s
        self._expiry_s = keepalive_expiry_s
        self._idle: collections.deque[_Conn] = collections.deque()
        self._open = 0
        self._free = asyncio.Semaphore(limit)
        self._batch = _Batch()
        self.connections_opened = 0

    async def _connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                _, conn = await loop.create_connection(lambda: _Conn(self._batch), self.host, self.port)
        except TimeoutError:
            raise ConnectFailed(f"connect timed out after {self._connect_timeout_s:g} s") from None
        except OSError as exc:
            raise ConnectFailed(f"{type(exc).__name__}: {exc}") from exc
        self.connections_opened += 1
        return conn

    async def request(self, request: bytes, sink: Sink, *, fresh: bool = False) -> None:
        """Send ``request`` (complete bytes) on an idle or new connection and feed the answer to ``sink``.
        Raises :class:`ConnectFailed`, :class:`BrokenResponse` (:class:`Stale` for a reused connection that never
        answered) or whatever ``sink`` raised; on any exception or cancellation the connection is closed."""
        async with self._free:
            conn = None
            while self._idle and not fresh:
                candidate = self._idle.popleft()
                if not candidate.closed and monotonic() - candidate.idle_since < self._expiry_s:
                    conn = candidate
                    break
                if candidate.transport is not None:
                    candidate.transport.close()
            if conn is None:
                conn = await self._connect()
            else:
                conn.reused = True
            ok = False
            try:
                await conn.start(request, sink)
                ok = True
            finally:
                if ok and conn.keep_alive and not conn.closed and len(self._idle) < self.limit:
                    conn.idle_since = monotonic()
                    self._idle.append(conn)
                elif conn.transport is not None:
                    conn.transport.close()

    async def warm(self, n: int, request: bytes, sink_factory: type[Sink]) -> None:
        """Have up to ``n`` idle connections ready: open the missing ones with one small request each (failures
        ignored)."""
        ready = sum(1 for conn in self._idle if not conn.closed)

        async def one() -> None:
            with contextlib.suppress(OSError, BrokenResponse):
                await self.request(request, sink_factory(), fresh=True)

        await asyncio.gather(*(one() for _ in range(max(0, min(n, self.limit) - ready))))

    async def aclose(self) -> None:
        while self._idle:
            conn = self._idle.popleft()
            if conn.transport is not None:
                conn.transport.close()


class Origin:
    """One ``http://host[:port][/prefix]`` origin: its pool and the bytes of its requests (headers fixed per
    client: ``host``, then the client's own, then the request's)."""

    def __init__(
        self,
        host: str,
        port: int,
        prefix: str,
        headers: Mapping[str, str],
        *,
        limit: int,
        connect_timeout_s: float,
        keepalive_expiry_s: float,
    ) -> None:
        self.prefix = prefix
        authority = host if port == 80 else f"{host}:{port}"
        if ":" in host:  # an IPv6 literal
            authority = f"[{host}]" if port == 80 else f"[{host}]:{port}"
        lines = [f"host: {authority}"]
        for name, value in headers.items():
            if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
                continue
            lines.append(f"{name}: {value}")
        for line in lines:
            if "\r" in line or "\n" in line or ":" not in line:
                raise ValueError("an HTTP header name or value contains a line break")
        self._fixed = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self.pool = Http1Pool(
            host, port, limit, connect_timeout_s=connect_timeout_s, keepalive_expiry_s=keepalive_expiry_s
        )

    def post(self, path: str, content: bytes) -> bytes:
        """A JSON POST asking for an event stream."""
        return b"".join(
            (
                b"POST %s HTTP/1.1\r\n" % (self.prefix + path).encode("latin-1"),
                self._fixed,
                b"content-type: application/json\r\naccept: text/event-stream\r\ncontent-length: %d\r\n\r\n"
                % len(content),
                content,
            )
        )

    def get(self, path: str) -> bytes:
        return b"GET %s HTTP/1.1\r\n%s\r\n" % ((self.prefix + path).encode("latin-1"), self._fixed)


def lean_origin(
    base_url: str, headers: Mapping[str, str], *, limit: int, connect_timeout_s: float, keepalive_expiry_s: float
) -> Origin | None:
    """The :class:`Origin` for ``base_url`` where this transport can carry it, else None (httpx then)."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname or parts.username or parts.password or parts.query:
        return None
    if parts.fragment or any(ord(c) > 126 or c in " \r\n" for c in base_url):
        return None
    proxies = urllib.request.getproxies_environment()
    if ("http" in proxies or "all" in proxies) and not urllib.request.proxy_bypass(parts.hostname):
        return None
    try:
        port = parts.port or 80
    except ValueError:
        return None
    return Origin(
        parts.hostname,
        port,
        parts.path.rstrip("/"),
        headers,
        limit=limit,
        connect_timeout_s=connect_timeout_s,
        keepalive_expiry_s=keepalive_expiry_s,
    )
