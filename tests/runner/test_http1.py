"""The lean HTTP/1.1 transport against raw servers that send exactly the bytes a test scripts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from raw_servers import serving

from bench.runner._http1 import BrokenResponse, ConnectFailed, Http1Pool, Stale, _Batch, _Conn

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
REQUEST = b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"


class Collect:
    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[bytes, bytes] = {}
        self.parts: list[bytes] = []
        self.times: list[int] = []
        self.sent_ns: int | None = None

    def sent(self, now: int) -> None:
        self.sent_ns = now

    def head(self, status: int, headers: dict[bytes, bytes]) -> None:
        self.status, self.headers = status, headers

    def body(self, now: int, data: bytes) -> None:
        self.parts.append(data)
        self.times.append(now)


@asynccontextmanager
async def raw_server(
    answers: Sequence[Sequence[bytes] | None], *, pause_s: float = 0.002
) -> AsyncIterator[tuple[int, list[int]]]:
    """Answer the n-th request on a connection with ``answers[n]``, one write per piece, a pause between pieces
    (``None``: read the request, then close the connection without a byte). Yields the port and the list of
    connections made."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            for answer in answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = [
                    int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length")
                ]
                await reader.readexactly(length[0] if length else 0)
                if answer is None:
                    break
                for piece in answer:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(pause_s)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    async with serving(handle) as port:
        yield port, connections


def _chunked(events: Sequence[bytes]) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events)
    return (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n"
        + body
        + b"0\r\n\r\n"
    )


EVENTS = [b'data: {"n": %d}\n\n' % i for i in range(5)]


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 13])
def test_a_chunked_body_split_anywhere_comes_out_whole(arun: Runner, cut: int) -> None:
    wire = _chunked(EVENTS)
    pieces = [wire[i : i + cut] for i in range(0, len(wire), cut)]

    async def go() -> tuple[Collect, Collect, int]:
        async with raw_server([pieces, [wire]]) as (port, conns):
            pool = Http1Pool("127.0.0.1", port, 1)
            first, second = Collect(), Collect()
            await pool.request(REQUEST, first)
            await pool.request(REQUEST, second)  # the same keep-alive connection
            await pool.aclose()
            return first, second, len(conns)

    first, second, connections = arun(go())
    for sink in (first, second):
        assert sink.status == 200 and sink.headers[b"content-type"] == b"text/event-stream"
        assert b"".join(sink.parts) == b"".join(EVENTS)
        assert sink.sent_ns is not None and [sink.sent_ns, *sink.times] == sorted([sink.sent_ns, *sink.times])
    assert connections == 1


def test_content_length_and_close_delimited_bodies(arun: Runner) -> None:
    sized = b"HTTP/1.1 404 Not Found\r\ncontent-length: 11\r\n\r\n" + b"not found!!"
    until_close = b"HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it"

    async def go() -> tuple[Collect, Collect]:
        async with raw_server([[sized[:30], sized[30:]], [until_close]]) as (port, _):
            pool = Http1Pool("127.0.0.1", port, 1)
            a, b = Collect(), Collect()
            await pool.request(REQUEST, a)
            await pool.request(REQUEST, b)
            await pool.aclose()
            return a, b

    a, b = arun(go())
    assert (a.status, b"".join(a.parts)) == (404, b"not found!!")
    assert (b.status, b"".join(b.parts)) == (200, b"all of it")


def test_a_stream_cut_mid_body_is_broken_with_bytes(arun: Runner) -> None:
    wire = _chunked(EVENTS)

    async def go() -> None:
        async with raw_server([[wire[:-40]]]) as (port, _):
            await Http1Pool("127.0.0.1", port, 1).request(REQUEST, Collect())

    with pytest.raises(BrokenResponse) as info:
        arun(go())
    assert info.value.got_bytes and not isinstance(info.value, Stale) and info.value.kind == "stream_broken"


def test_a_reused_connection_closed_by_the_server_is_stale_and_a_fresh_one_works(arun: Runner) -> None:
    wire = _chunked(EVENTS)

    async def go() -> int:
        async with raw_server([[wire], None]) as (port, conns):  # the second request is read, never answered
            pool = Http1Pool("127.0.0.1", port, 1)
            await pool.request(REQUEST, Collect())
            with pytest.raises(Stale):
                await pool.request(REQUEST, Collect())
            sink = Collect()
            await pool.request(REQUEST, sink, fresh=True)
            assert b"".join(sink.parts) == b"".join(EVENTS)
            return len(conns)

    assert arun(go()) == 2


def test_a_new_connection_closed_without_an_answer_is_broken_not_stale(arun: Runner) -> None:
    async def go() -> None:
        async with raw_server([None]) as (port, _):
            await Http1Pool("127.0.0.1", port, 1).request(REQUEST, Collect())

    with pytest.raises(BrokenResponse) as info:
        arun(go())
    assert not isinstance(info.value, Stale) and not info.value.got_bytes


@pytest.mark.parametrize(
    "wire",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nxx\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\ntoo long",
    ],
)
def test_what_is_not_http_is_a_broken_response(arun: Runner, wire: bytes) -> None:
    async def go() -> None:
        async with raw_server([[wire]]) as (port, _):
            await Http1Pool("127.0.0.1", port, 1).request(REQUEST, Collect())

    with pytest.raises(BrokenResponse) as info:
        arun(go())
    assert info.value.kind == "bad_response"


def test_nobody_listening_is_a_connect_failure(arun: Runner) -> None:
    async def go() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        await Http1Pool("127.0.0.1", port, 1).request(REQUEST, Collect())

    with pytest.raises(ConnectFailed):
        arun(go())


def test_the_pool_never_opens_more_than_its_limit(arun: Runner) -> None:
    wire = _chunked(EVENTS)

    async def go() -> int:
        async with raw_server([[wire]] * 20, pause_s=0.005) as (port, conns):
            pool = Http1Pool("127.0.0.1", port, 3)
            await asyncio.gather(*(pool.request(REQUEST, Collect()) for _ in range(12)))
            await pool.aclose()
            return len(conns)

    assert arun(go()) == 3


def test_every_ready_read_is_stamped_before_any_is_parsed(arun: Runner) -> None:
    """Two connections deliver in the same loop iteration; parsing the first takes 20 ms. The second read's stamp
    is taken before that parsing, not after it (the stamp is the bytes' receipt, not the end of the queue)."""

    class Slow(Collect):
        def body(self, now: int, data: bytes) -> None:
            super().body(now, data)
            end = time.perf_counter_ns() + 20_000_000
            while time.perf_counter_ns() < end:
                pass
            self.parsed_ns = time.perf_counter_ns()

    class Transport:
        def write(self, data: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    async def go() -> tuple[Slow, Collect]:
        batch = _Batch()
        first, second = _Conn(batch), _Conn(batch)
        slow, other = Slow(), Collect()
        waits = []
        for conn, sink in ((first, slow), (second, other)):
            conn.transport = Transport()  # type: ignore[assignment]
            waits.append(conn.start(REQUEST, sink))
        wire = _chunked(EVENTS)
        first.data_received(wire)  # as the loop's reader callbacks call it, one after the other
        second.data_received(wire)
        await asyncio.gather(*waits)
        return slow, other

    slow, other = arun(go())
    assert b"".join(other.parts) == b"".join(EVENTS) == b"".join(slow.parts)
    assert other.times[0] < slow.parsed_ns - 15_000_000
