"""Which transport carries a request, and what the lean HTTP/1.1 one puts on the wire and takes off it: the request
bytes (route under a base path, the client's headers, the length), content encodings, keep-alive expiry, warm-up;
and the parser's fast path for the common OpenAI chunk, held to the general path on generated chunks."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from raw_servers import serving

from bench.runner._sse import SSEEvent
from bench.runner._stream import StreamState
from bench.runner.client import StreamingClient
from bench.runner.request import RequestResult, RequestSpec

Runner = Callable[[Coroutine[Any, Any, Any]], Any]

EVENTS = [
    b'data: {"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":1,"prompt_tokens":2}}\n\n',
    b'data: {"choices":[{"text":"b","finish_reason":"length"}],"usage":{"completion_tokens":2,"prompt_tokens":2}}\n\n',
    b"data: [DONE]\n\n",
]


def _answer(body: bytes, encoding: bytes | None = None) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n" % len(body)
    if encoding:
        head += b"content-encoding: " + encoding + b"\r\n"
    return head + b"\r\n" + body


@asynccontextmanager
async def capture(answer: bytes) -> AsyncIterator[tuple[int, list[bytes], list[int]]]:
    """A server answering every request on a connection with ``answer``; yields its port, every request's head
    and body as read, and one entry per connection accepted."""
    seen: list[bytes] = []
    conns: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                fields = (line.partition(b":") for line in head.split(b"\r\n"))
                sizes = [int(v) for k, _, v in fields if k == b"content-length"]
                seen.append(head + await reader.readexactly(sizes[0] if sizes else 0))
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    async with serving(handle) as port:
        yield port, seen, conns


SPEC = RequestSpec(prompt="x y", max_tokens=2, api="completions")


def test_plain_http_takes_the_lean_transport_and_the_rest_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert StreamingClient("http://127.0.0.1:8000/v1", max_connections=1).transport_name == "http1"
    assert StreamingClient("https://127.0.0.1:8000", max_connections=1).transport_name == "httpx"
    assert StreamingClient("http://u:p@127.0.0.1:8000", max_connections=1).transport_name == "httpx"
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")
    assert StreamingClient("http://engine:8000", max_connections=1).transport_name == "httpx"
    monkeypatch.setenv("no_proxy", "engine")
    assert StreamingClient("http://engine:8000", max_connections=1).transport_name == "http1"


def test_the_request_on_the_wire(arun: Runner) -> None:
    async def go() -> tuple[RequestResult, list[bytes]]:
        async with capture(_answer(b"".join(EVENTS))) as (port, seen, _):
            url = f"http://127.0.0.1:{port}/prefix/v1"
            headers = {"Authorization": "Bearer abc", "X-Team": "perf"}
            async with StreamingClient(url, max_connections=1, headers=headers) as client:
                return await client.send(SPEC), seen

    result, seen = arun(go())
    assert result.ok and result.output_tokens == 2 and result.finish_reason == "length", result.error
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /prefix/v1/completions HTTP/1.1"
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    assert fields[b"host"] == b"127.0.0.1:%d" % int(fields[b"host"].split(b":")[1])
    assert fields[b"authorization"] == b"Bearer abc" and fields[b"x-team"] == b"perf"
    assert fields[b"content-type"] == b"application/json" and fields[b"accept"] == b"text/event-stream"
    assert int(fields[b"content-length"]) == len(body)
    assert json.loads(body)["prompt"] == "x y" and json.loads(body)["stream"] is True


def test_a_header_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        StreamingClient("http://127.0.0.1:1", max_connections=1, headers={"x-a": "b\r\nx-evil: 1"})


@pytest.mark.parametrize(("encoding", "kind"), [(b"gzip", None), (b"br", "bad_response"), (b"gzip-broken", None)])
def test_content_encodings(arun: Runner, encoding: bytes, kind: str | None) -> None:
    body = b"".join(EVENTS)
    if encoding == b"gzip":
        wire = _answer(gzip.compress(body), b"gzip")
    elif encoding == b"br":
        wire = _answer(body, b"br")
    else:  # says gzip, is not
        wire, kind = _answer(body, b"gzip"), "bad_response"

    async def go() -> RequestResult:
        async with capture(wire) as (port, _, _), StreamingClient(f"http://127.0.0.1:{port}", max_connections=1) as c:
            return await c.send(SPEC)

    result = arun(go())
    assert result.error_kind == kind, result.error
    if kind is None:
        assert result.ok and result.output_tokens == 2 and len(result.chunk_times_ns) == 2
    elif encoding == b"br":
        assert result.error is not None and "content-encoding 'br'" in result.error
    else:
        assert result.error is not None and "DecodingError" in result.error


def test_an_idle_connection_past_its_keepalive_expiry_is_not_reused(arun: Runner) -> None:
    async def go(expiry_s: float) -> int:
        async with capture(_answer(b"".join(EVENTS))) as (port, _, conns):
            url = f"http://127.0.0.1:{port}"
            async with StreamingClient(url, max_connections=1, keepalive_expiry_s=expiry_s) as client:
                assert (await client.send(SPEC)).ok
                await asyncio.sleep(0.1)
                assert (await client.send(SPEC)).ok
            return len(conns)

    assert arun(go(0.05)) == 2
    assert arun(go(60.0)) == 1


def test_warming_twice_opens_no_more_connections_than_asked(arun: Runner) -> None:
    async def go() -> tuple[int, int]:
        async with capture(_answer(b"".join(EVENTS))) as (port, seen, conns):
            async with StreamingClient(f"http://127.0.0.1:{port}", max_connections=4) as client:
                await client.warm_connections(3)
                await client.warm_connections(3)
                await client.warm_connections(4)
                results = await asyncio.gather(*(client.send(SPEC) for _ in range(4)))
                assert all(r.ok for r in results)
                assert seen[0].startswith(b"GET /health HTTP/1.1\r\n")
            return len(conns), len(seen)

    assert arun(go()) == (4, 4 + 4)


@st.composite
def _chunk(draw: st.DrawFn) -> dict[str, Any]:
    """The common chunk (one choice with text, usage with int counts), each part replaced now and then by what a
    fast path could mistake for it: other types, a missing key, a second choice, reasoning, prompt details,
    llama.cpp timings."""

    def odd() -> bool:
        return draw(st.integers(0, 4)) == 0

    def value(common: st.SearchStrategy[Any]) -> Any:
        return draw(st.one_of(st.none(), st.just(True), st.just("3"), st.just(1.5))) if odd() else draw(common)

    text = st.text(max_size=3)
    choice: dict[str, Any] = {"finish_reason": draw(st.sampled_from([None, "", "stop", "length"]))}
    if odd():
        choice["finish_reason"] = value(st.none())
    choice["text"] = value(text)
    delta: dict[str, Any] = {"content": value(text)}
    if odd():
        delta[draw(st.sampled_from(["reasoning_content", "reasoning"]))] = value(text)
    choice["delta"] = value(st.just(delta))
    for key in ("text", "delta", "finish_reason"):
        if odd():
            del choice[key]
    usage: dict[str, Any] = {"completion_tokens": value(st.integers(0, 40)), "prompt_tokens": value(st.integers(0, 9))}
    if odd():
        usage["prompt_tokens_details"] = {"cached_tokens": value(st.integers(0, 9))}
    chunk: dict[str, Any] = {"choices": value(st.just([choice])), "usage": value(st.just(usage))}
    if odd():
        chunk["choices"] = [choice, dict(choice)]
    if odd():
        chunk["timings"] = {"draft_n": value(st.integers(0, 9)), "draft_n_accepted": 1, "cache_n": 2}
    for key in ("choices", "usage"):
        if odd():
            del chunk[key]
    return chunk


@settings(max_examples=500, deadline=None)
@given(api=st.sampled_from(["chat", "completions"]), chunks=st.lists(_chunk(), max_size=6), keep=st.booleans())
def test_the_fast_path_folds_every_chunk_as_the_general_path(
    api: str, chunks: list[dict[str, Any]], keep: bool
) -> None:
    fast, general = StreamState(api, keep_text=keep), StreamState(api, keep_text=keep)
    for now, chunk in enumerate(chunks):
        fast.on_event(SSEEvent(json.dumps(chunk)), now)
        general.openai_general(json.loads(json.dumps(chunk)), now)
    assert {k: getattr(fast, k) for k in StreamState.__slots__ if k not in ("ids", "decoded_chars")} == {
        k: getattr(general, k) for k in StreamState.__slots__ if k not in ("ids", "decoded_chars")
    }
