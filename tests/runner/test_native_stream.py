"""SGLang /generate streams: new tokens from the growth of output_ids, cumulative or incremental, at a parse cost
linear in the tokens (bench.runner._native)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

import bench.runner._stream as stream_module
from bench.runner._native import split_chunk
from bench.runner._sse import SSEDecoder, SSEEvent
from bench.runner._stream import StreamState
from bench.runner.client import StreamingClient
from bench.runner.request import RequestResult, RequestSpec
from bench.testing.testserver import TestServerConfig, serve

Runner = Callable[[Coroutine[Any, Any, Any]], Any]


def sglang_stream(
    n: int,
    *,
    per_chunk: int = 1,
    incremental: bool = False,
    counts: bool = True,
    spaced: bool = False,
    text_of: Callable[[int], str] = lambda i: f" {i % 97}",
) -> list[bytes]:
    """SSE events in SGLang 0.5.17's /generate layout (key order and compact JSON of the real fixtures)."""
    separators = (", ", ": ") if spaced else (",", ":")
    events: list[bytes] = []
    ids: list[int] = []
    text = ""
    done = 0
    while done < n:
        new = list(range(done, min(n, done + per_chunk)))
        piece = "".join(text_of(i) for i in new)
        ids += [i % 97 for i in new]
        text += piece
        done += len(new)
        meta: dict[str, Any] = {
            "id": "x",
            "finish_reason": {"type": "length", "length": n} if done == n else None,
            "prompt_tokens": 47,
        }
        if counts:
            meta["completion_tokens"] = done
        meta["cached_tokens"] = 3
        obj = {
            "text": piece if incremental else text,
            "output_ids": [i % 97 for i in new] if incremental else ids,
            "meta_info": meta,
        }
        events.append(b"data: " + json.dumps(obj, separators=separators).encode() + b"\n\n")
    return [*events, b"data: [DONE]\n\n"]


def replay(arun: Runner, events: list[bytes]) -> RequestResult:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"".join(events), headers={"content-type": "text/event-stream"})

    async def go() -> RequestResult:
        transport = httpx.MockTransport(handler)
        async with StreamingClient("http://replay", max_connections=1, transport=transport) as c:
            return await c.send(RequestSpec(prompt="x", max_tokens=10_000, api="generate"))

    result: RequestResult = arun(go())
    return result


@pytest.fixture(params=["split", "whole"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways a chunk is read: split (meta_info only; the client uses it from 2 kB chunks on) and whole."""
    monkeypatch.setattr(stream_module, "_WHOLE_BELOW", 0 if request.param == "split" else 10**9)
    return str(request.param)


@pytest.mark.parametrize("incremental", [False, True])
@pytest.mark.parametrize("counts", [True, False])
@pytest.mark.parametrize("per_chunk", [1, 3])
def test_tokens_per_chunk_from_output_ids(
    arun: Runner, path: str, incremental: bool, counts: bool, per_chunk: int
) -> None:
    r = replay(arun, sglang_stream(20, per_chunk=per_chunk, incremental=incremental, counts=counts))
    assert r.ok, r.error
    expected = [per_chunk] * (20 // per_chunk) + ([20 % per_chunk] if 20 % per_chunk else [])
    assert r.chunk_tokens == expected and len(r.chunk_times_ns) == len(expected)
    assert r.stream_mode == ("incremental" if incremental else "cumulative")
    assert r.output_tokens == 20 and r.token_source == "server_meta_info"
    assert (r.input_tokens, r.cached_tokens, r.finish_reason) == (47, 3, "length")


def test_repeated_ids_in_incremental_chunks_are_not_taken_for_a_cumulative_stream(arun: Runner, path: str) -> None:
    # NGRAM output repeats itself ("198,26,256" again and again): each incremental chunk can equal the last one
    r = replay(arun, sglang_stream(12, per_chunk=3, incremental=True, text_of=lambda i: "*"))
    assert r.chunk_tokens == [3, 3, 3, 3] and r.stream_mode == "incremental"


def test_layouts_the_fast_path_does_not_know_are_decoded_whole(arun: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "_WHOLE_BELOW", 0)
    spaced = replay(arun, sglang_stream(30, spaced=True))
    assert spaced.chunk_tokens == [1] * 30 and spaced.decoded_chars < 30 * 200  # still the fast path
    reordered = [
        e.replace(b'data: {"text"', b'data: {"x": 1, "text"') if e != b"data: [DONE]\n\n" else e
        for e in sglang_stream(30)
    ]
    whole = replay(arun, reordered)
    assert whole.chunk_tokens == [1] * 30 and whole.output_tokens == 30
    assert whole.decoded_chars > sum(len(e) for e in reordered) - 1000  # every chunk decoded whole


def test_text_that_looks_like_keys_does_not_confuse_the_split() -> None:
    text = ' "output_ids":[1,2,3],"meta_info":{"x":1}} [ ] \\"meta_info\\": '
    data = json.dumps(
        {"text": text, "output_ids": [5, 6], "meta_info": {"completion_tokens": 2}}, separators=(",", ":")
    )
    chunk = split_chunk(data)
    assert chunk is not None and chunk.ids == 2 and chunk.meta == {"completion_tokens": 2}
    assert split_chunk(json.dumps({"text": text, "meta_info": {}})) is None  # no output_ids: decoded whole
    assert split_chunk(data[:-1]) is None  # truncated
    assert split_chunk('{"text":"a","output_ids":[],"meta_info":{"completion_tokens":0}}').ids == 0  # type: ignore[union-attr]


def test_testserver_sglang_modes_through_the_client(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=1, itl_ms=1, tokens_per_chunk=3, output_tokens=10, draft_tokens_per_step=4)

    async def go(incremental: bool) -> RequestResult:
        spec = RequestSpec(
            prompt="a b c",
            max_tokens=10,
            api="generate",
            extra_body={"benchbook_test": {"incremental_output": incremental}},
        )
        async with serve(cfg) as srv, StreamingClient(srv.url, max_connections=1) as c:
            return await c.send(spec)

    for incremental in (False, True):  # chunks of a few hundred bytes: decoded whole
        r = arun(go(incremental))
        assert r.chunk_tokens == [3, 3, 3, 1] and r.output_tokens == 10
        assert r.stream_mode == ("incremental" if incremental else "cumulative")
        assert (r.verify_steps, r.draft_tokens, r.accepted_tokens) == (4, 16, 6)
        assert (r.server_accept_length, r.server_accept_rate) == (10 / 4, 6 / 16)


# -- cost: linear in the tokens ---------------------------------------------------------------------------------


def test_parse_work_is_linear_in_tokens(arun: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    """Characters decoded into Python objects per request: 4x the tokens gives about 4x the work (only
    meta_info is decoded, whose size barely grows). Decoding every cumulative chunk whole, as the fallback does,
    gives about 16x: the same test against it shows that the measure can tell the two apart."""
    small, large = sglang_stream(1000), sglang_stream(4000)
    fast = [replay(arun, s) for s in (small, large)]
    assert [r.chunk_tokens == [1] * n for r, n in zip(fast, (1000, 4000), strict=True)] == [True, True]
    ratio = fast[1].decoded_chars / fast[0].decoded_chars
    assert ratio < 4.4, ratio
    monkeypatch.setattr(stream_module, "split_chunk", lambda data, skip=0: None)
    whole = [replay(arun, s) for s in (small, large)]
    assert whole[1].chunk_tokens == [1] * 4000
    assert whole[1].decoded_chars / whole[0].decoded_chars > 14


def _parse_seconds(events: list[SSEEvent], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        state = StreamState("generate", keep_text=False)
        t0 = time.process_time()
        for event in events:
            state.on_event(event, 0)
        best = min(best, time.process_time() - t0)
    assert state.ids.seen == sum(1 for e in events if e.data != "[DONE]")
    return best


def test_parse_time_is_linear_in_tokens() -> None:
    """CPU time of folding the events (SSE framing excluded: moving the bytes the server chose to repeat is
    quadratic in cumulative mode whatever the client does). Linear: about 4x from 1,000 to 4,000 tokens;
    decoding each chunk whole measured about 19x. Best of 5 runs, as the machine may be busy."""
    events = []
    for n in (1000, 4000):
        decoder = SSEDecoder()
        events.append([e for chunk in sglang_stream(n) for e in decoder.feed(chunk)])
    ratio = _parse_seconds(events[1]) / _parse_seconds(events[0])
    assert ratio < 8.0, ratio
