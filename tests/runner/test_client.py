"""The streaming client against the known-timing test server, and SSE edge cases through httpx.MockTransport."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import statistics
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.runner._sse import SSEDecoder
from bench.runner.client import StreamingClient
from bench.runner.load_generator import LevelRun
from bench.runner.metrics import FORMULA_ITL_SPREAD, FORMULA_ITL_UNKNOWN_CHUNKING, summarize_level
from bench.runner.request import RequestResult, RequestSpec, build_request
from bench.testing.testserver import StreamLog, TestServerConfig, expected_timing, serve

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
MS = 1e6


async def _measure(
    cfg: TestServerConfig, spec: RequestSpec, n: int = 3, **client_kw: Any
) -> list[tuple[RequestResult, StreamLog]]:
    async with serve(cfg) as srv, StreamingClient(srv.url, max_connections=2, **client_kw) as client:
        await client.warm_connections(1)
        pairs = []
        for _ in range(n):
            result = await client.send(spec)
            pairs.append((result, srv.stats.streams[-1]))
        return pairs


REL = 0.10
"""Timing tolerance, relative to the configured schedule. The schedules below are long enough (TTFT 100 ms, chunks
15 ms apart) that the jitter of a busy 2-core machine (a millisecond or two of scheduling) stays well inside it,
while an error a client could make (TCP setup or request building inside TTFT, a chunk timestamped late, tokens
mis-spread) is a large fraction of it."""


def _server_itl_ms(log: StreamLog) -> list[float]:
    """Per-token ITL of what the server really did: each gap between its writes, spread over the chunk's tokens."""
    gaps = [(b - a) / MS for a, b in zip(log.emit_ns, log.emit_ns[1:], strict=False)]
    return [gap / tokens for gap, tokens in zip(gaps, log.chunk_tokens[1:], strict=True) for _ in range(tokens)]


def _check_timing(pairs: list[tuple[RequestResult, StreamLog]], cfg: TestServerConfig, max_tokens: int) -> None:
    """Counts exact for every request. Times, against two truths on the same monotonic clock: the server's own log
    of when it wrote each chunk (``StreamLog``), and its configured schedule (``expected_timing``).

    * causality, for every request and chunk: no chunk is seen before the server wrote it, no request reaches the
      server before it was sent, no TTFT is shorter than the configured one;
    * the client measures what happened: its TTFT, TPOT, ITL and per-chunk receive delay differ from the server's
      log by at most ``REL`` of the scheduled value;
    * and what happened is the schedule: the server's TTFT and TPOT are within ``REL`` of the configured ones.

    Relative errors are medians over the requests, so one request descheduled on a busy machine does not decide."""
    truth = expected_timing(cfg, max_tokens)
    itl_truth = statistics.median(truth.itl_ms) if truth.itl_ms else None
    gap_ms = min(cfg.itl_ms, cfg.ttft_ms)
    err: dict[str, list[float]] = {k: [] for k in ("receive", "ttft", "tpot", "itl", "server_ttft", "server_tpot")}
    for result, log in pairs:
        assert result.ok, result.error
        assert len(result.chunk_times_ns) == len(truth.chunk_tokens) == len(log.emit_ns)
        assert log.chunk_tokens == truth.chunk_tokens
        assert result.finish_reason == truth.finish_reason
        receive = [(c - e) / MS for c, e in zip(result.chunk_times_ns, log.emit_ns, strict=True)]
        assert min(receive) >= 0.0  # never before the server wrote it
        assert result.t_first_ns is not None and result.t_last_ns is not None
        assert result.t_sent_ns <= log.t0_ns
        ttft = (result.t_first_ns - result.t_sent_ns) / MS
        assert ttft >= truth.ttft_ms
        server_ttft = (log.emit_ns[0] - log.t0_ns) / MS
        err["receive"].append(statistics.median(receive) / gap_ms)
        err["ttft"].append((ttft - server_ttft) / truth.ttft_ms)  # request delivery + receive
        err["server_ttft"].append(abs(server_ttft - truth.ttft_ms) / truth.ttft_ms)
        level = summarize_level(LevelRun(1, [result], [], result.t_sent_ns, result.t_done_ns or 0, None))
        if truth.tpot_ms is not None and result.output_tokens is not None:
            assert level.tpot_ms is not None and level.tpot_ms.p50 is not None
            server_tpot = (log.emit_ns[-1] - log.emit_ns[0]) / MS / (truth.output_tokens - 1)
            err["tpot"].append(abs(level.tpot_ms.p50 - server_tpot) / truth.tpot_ms)
            err["server_tpot"].append(abs(server_tpot - truth.tpot_ms) / truth.tpot_ms)
        if result.chunk_tokens is not None and itl_truth is not None:
            assert level.itl_ms is not None and level.itl_ms.n == len(truth.itl_ms)
            assert level.itl_ms.p50 is not None
            err["itl"].append(abs(level.itl_ms.p50 - statistics.median(_server_itl_ms(log))) / itl_truth)
    for name, values in err.items():
        if values:
            assert statistics.median(values) <= REL, (name, values)


@pytest.mark.parametrize("api", ["chat", "completions", "generate"])
@pytest.mark.parametrize("tokens_per_chunk", [1, 3])
def test_timing_and_counts_match_the_truth(arun: Runner, api: str, tokens_per_chunk: int) -> None:
    cfg = TestServerConfig(ttft_ms=100, itl_ms=15, tokens_per_chunk=tokens_per_chunk, output_tokens=19)
    spec = RequestSpec(prompt="one two three", max_tokens=40, api=api)  # type: ignore[arg-type]
    pairs = arun(_measure(cfg, spec))
    _check_timing(pairs, cfg, 40)
    plan = expected_timing(cfg, 40).chunk_tokens
    for result, _ in pairs:
        assert result.output_tokens == 19
        assert result.input_tokens == 3
        assert result.chunk_tokens == plan  # continuous usage / meta_info give per-chunk counts
        assert result.token_source == ("server_meta_info" if api == "generate" else "server_usage")
        assert result.finish_reason == "stop"


def test_final_usage_only_gives_counts_but_not_per_chunk_tokens(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=100, itl_ms=15, tokens_per_chunk=3, output_tokens=16)
    pairs = arun(_measure(cfg, RequestSpec(prompt="a", max_tokens=16), continuous_usage=False))
    _check_timing(pairs, cfg, 16)
    result, log = pairs[0]
    assert result.output_tokens == 16 and result.chunk_tokens is None and result.finish_reason == "length"
    level = summarize_level(LevelRun(1, [result], [], result.t_sent_ns, result.t_done_ns or 0, None))
    assert level.itl_ms is not None and level.itl_ms.formula == FORMULA_ITL_UNKNOWN_CHUNKING
    # 6 chunks (3,3,3,3,3,1): each gap (15 ms scheduled) divided by the mean tokens per chunk (16-1)/(6-1) = 3; the
    # gaps the server really left (its log; _check_timing held them to the schedule) are the truth for this request
    gaps = [(b - a) / MS for a, b in zip(log.emit_ns, log.emit_ns[1:], strict=False)]
    assert level.itl_ms.p50 == pytest.approx(statistics.median(gaps) / 3, rel=REL)


def test_without_usage_tokens_are_unknown_never_max_tokens(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=100, itl_ms=15, tokens_per_chunk=2, output_tokens=10, usage=False)
    pairs = arun(_measure(cfg, RequestSpec(prompt="a b", max_tokens=50)))
    _check_timing(pairs, cfg, 50)
    result = pairs[0][0]
    assert result.output_tokens is None and result.token_source == "unknown" and result.chunk_tokens is None
    level = summarize_level(LevelRun(1, [result], [], result.t_sent_ns, result.t_done_ns or 0, None))
    assert level.tpot_ms is None and level.output_throughput is None and level.itl_ms is None
    assert level.output_tokens is not None and level.output_tokens.source == "unknown"
    assert level.ttft_ms is not None  # latency that needs no counts is still measured


def test_tokenizer_fallback_when_the_server_gives_no_usage(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=10, itl_ms=3, output_tokens=12, usage=False)
    spec = RequestSpec(prompt="four words in here", max_tokens=50, api="completions")
    pairs = arun(_measure(cfg, spec, n=1, tokenizer=lambda text: len(text.split())))
    result = pairs[0][0]
    assert (result.output_tokens, result.token_source) == (12, "tokenizer")
    assert (result.input_tokens, result.input_token_source) == (4, "tokenizer")


def test_role_only_first_chunk_is_not_the_first_token(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=100, itl_ms=15, output_tokens=5, role_chunk=True)
    pairs = arun(_measure(cfg, RequestSpec(prompt="hi", max_tokens=50)))
    _check_timing(pairs, cfg, 50)  # TTFT >= 100 ms: the role-only chunk, sent at once, is not the first token
    for result, _ in pairs:
        assert len(result.chunk_times_ns) == 5


def test_speculative_counters(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=10, itl_ms=4, tokens_per_chunk=3, output_tokens=20, draft_tokens_per_step=4)
    chat = arun(_measure(cfg, RequestSpec(prompt="x", max_tokens=20), n=1))[0][0]
    assert (chat.draft_tokens, chat.accepted_tokens) == (7 * 4, 20 - 7)  # 7 chunks = 7 verify steps
    native = arun(_measure(cfg, RequestSpec(prompt="x", max_tokens=20, api="generate"), n=1))[0][0]
    assert native.verify_steps == 7
    level = summarize_level(LevelRun(1, [chat, native], [], chat.t_sent_ns, native.t_done_ns or 0, None))
    assert level.speculative is not None
    assert level.speculative.accept_length is not None and level.speculative.accept_length.value == round(20 / 7, 4)
    assert level.speculative.acceptance_rate is not None
    assert level.speculative.acceptance_rate.value == round(13 / 28, 6)


@pytest.mark.parametrize("mode", ["close", "error_event"])
def test_mid_stream_failure_is_stream_broken(arun: Runner, mode: str) -> None:
    cfg = TestServerConfig(ttft_ms=5, itl_ms=2, output_tokens=10, fail_after_chunks=3, fail_mode=mode)  # type: ignore[arg-type]
    result = arun(_measure(cfg, RequestSpec(prompt="x", max_tokens=10), n=1))[0][0]
    assert not result.ok and result.error_kind == "stream_broken"
    assert len(result.chunk_times_ns) == 3 and result.status_code == 200
    if mode == "error_event":
        assert result.error is not None and "injected failure" in result.error


def test_http_errors_by_class(arun: Runner) -> None:
    async def go() -> tuple[RequestResult, RequestResult]:
        async with serve(TestServerConfig()) as srv, StreamingClient(srv.url, max_connections=1) as client:
            five = await client.send(
                RequestSpec(prompt="x", max_tokens=5, extra_body={"benchbook_test": {"fail_status": 503}})
            )
            four = await client.send(
                RequestSpec(prompt="x", max_tokens=5, extra_body={"benchbook_test": {"no_such_knob": 1}})
            )
            return five, four

    five, four = arun(go())
    assert (five.ok, five.error_kind, five.status_code) == (False, "http_5xx", 503)
    assert five.error is not None and "configured to fail with 503" in five.error
    assert (four.ok, four.error_kind, four.status_code) == (False, "http_4xx", 400)
    assert four.error is not None and "no_such_knob" in four.error


def test_connection_refused_is_connect(arun: Runner) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request: nothing listens there

    async def go() -> RequestResult:
        async with StreamingClient(f"http://127.0.0.1:{port}", max_connections=1) as client:
            return await client.send(RequestSpec(prompt="x", max_tokens=5))

    result = arun(go())
    assert (result.ok, result.error_kind, result.status_code) == (False, "connect", None)


def test_timeout(arun: Runner) -> None:
    cfg = TestServerConfig(ttft_ms=400, itl_ms=1, output_tokens=2)
    result = arun(_measure(cfg, RequestSpec(prompt="x", max_tokens=5), n=1, timeout_s=0.05))[0][0]
    assert (result.ok, result.error_kind) == (False, "timeout")


@pytest.mark.parametrize(("n", "shard_size"), [(4, 1), (4, 8), (12, 8)])  # 12 over 8: pools of 8 and 4
def test_warm_connections_keeps_tcp_setup_out_of_ttft(arun: Runner, n: int, shard_size: int) -> None:
    async def go() -> tuple[int, int]:
        cfg = TestServerConfig(ttft_ms=5, itl_ms=1, output_tokens=2)
        async with serve(cfg) as srv, StreamingClient(srv.url, max_connections=n, shard_size=shard_size) as client:
            await client.warm_connections(n)
            opened = srv.stats.connections
            results = await asyncio.gather(*(client.send(RequestSpec(prompt="x", max_tokens=2)) for _ in range(n)))
            assert all(r.ok and r.t_start_ns is not None and r.t_sent_ns >= r.t_start_ns for r in results)
            return opened, srv.stats.connections

    assert arun(go()) == (n, n)  # the requests reused the warm connections: no new TCP connection


def test_build_request_bodies() -> None:
    spec = RequestSpec(prompt="p", max_tokens=7, ignore_eos=True, seed=3, model="m", extra_body={"top_k": 1})
    route, body = build_request(spec)
    assert route == "/v1/chat/completions"
    assert body["messages"] == [{"role": "user", "content": "p"}]
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert (body["ignore_eos"], body["seed"], body["model"], body["top_k"], body["stream"]) == (True, 3, "m", 1, True)
    route, body = build_request(
        RequestSpec(prompt="p", max_tokens=7, api="generate", ignore_eos=True, extra_body={"sampling_params": {"a": 1}})
    )
    assert route == "/generate"
    assert body["sampling_params"] == {"max_new_tokens": 7, "temperature": 0.0, "ignore_eos": True, "a": 1}
    with pytest.raises(ValueError, match="api='completions'"):
        build_request(RequestSpec(prompt=[{"role": "user", "content": "x"}], max_tokens=1, api="completions"))
    with pytest.raises(ValueError, match="max_tokens"):
        build_request(RequestSpec(prompt="x", max_tokens=0))


# ---- SSE decoding ------------------------------------------------------------------------------------------


def test_sse_decoder_line_endings_comments_and_multiline() -> None:
    decoder = SSEDecoder()
    stream = b': ping\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: error\rdata: x\r\rdata: [DONE]\n\n'
    events = [e for i in range(len(stream)) for e in decoder.feed(stream[i : i + 1])] + decoder.close()
    assert [(e.event, e.data) for e in events] == [(None, '{"a":\n1}'), ("error", "x"), (None, "[DONE]")]


def test_sse_decoder_split_crlf_and_utf8_and_missing_final_blank_line() -> None:
    decoder = SSEDecoder()
    text = "data: héllo\r\n\r\ndata: tail".encode()
    split = text.index(b"\xc3") + 1  # inside the two-byte é
    events = decoder.feed(text[:split]) + decoder.feed(text[split : split + 9]) + decoder.feed(text[split + 9 :])
    assert [e.data for e in events] == ["héllo"]
    assert [e.data for e in decoder.close()] == ["tail"]
    crlf = SSEDecoder()
    assert crlf.feed(b"data: a\r") == [] and [e.data for e in crlf.feed(b"\n\r\n")] == ["a"]


def _chat_chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> bytes:
    delta = {} if content is None else {"content": content}
    obj = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


VALID_STREAM = b"".join(
    [
        b"data: "
        + json.dumps({"choices": [{"delta": {"role": "assistant"}}], "usage": {"completion_tokens": 0}}).encode()
        + b"\n\n",
        b": keep-alive\n\n",
        _chat_chunk("a", usage={"completion_tokens": 1, "prompt_tokens": 5}),
        b"data: "
        + json.dumps(
            {"choices": [{"delta": {"reasoning_content": "think"}}], "usage": {"completion_tokens": 4}}
        ).encode()
        + b"\n\n",
        _chat_chunk("", usage={"completion_tokens": 4}),  # empty text: not a token
        _chat_chunk("bc", usage={"completion_tokens": 6}),
        _chat_chunk(None, "stop", timings={"draft_n": 8, "draft_n_accepted": 3}, usage={"completion_tokens": 7}),
        b"data: "
        + json.dumps({"choices": [], "usage": {"completion_tokens": 7, "prompt_tokens": 5}}).encode()
        + b"\n\n",
        b"data: [DONE]\n\n",
    ]
)


def _mock_client(
    body_parts: list[bytes], status: int = 200, seen: list[httpx.Request] | None = None
) -> StreamingClient:
    async def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)

        async def stream() -> AsyncIterator[bytes]:
            for part in body_parts:
                yield part

        return httpx.Response(status, content=stream(), headers={"content-type": "text/event-stream"})

    return StreamingClient("http://mock/v1", max_connections=1, transport=httpx.MockTransport(handler))


def _send(arun: Runner, parts: list[bytes], spec: RequestSpec | None = None, status: int = 200) -> RequestResult:
    async def go() -> RequestResult:
        async with _mock_client(parts, status) as client:
            return await client.send(spec or RequestSpec(prompt="x", max_tokens=8))

    result: RequestResult = arun(go())
    return result


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(VALID_STREAM) - 1), max_size=12, unique=True))
def test_any_split_of_a_stream_parses_the_same(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(VALID_STREAM)]
    parts = [VALID_STREAM[a:b] for a, b in itertools.pairwise(bounds)]

    async def go() -> RequestResult:
        async with _mock_client(parts) as client:
            return await client.send(RequestSpec(prompt="x", max_tokens=8))

    result = asyncio.run(go())
    assert result.ok and result.chunk_tokens == [1, 3, 2] and result.output_tokens == 7


def test_mock_stream_counts_and_kinds(arun: Runner) -> None:
    result = _send(arun, [VALID_STREAM])
    assert result.ok
    assert len(result.chunk_times_ns) == 3  # "a", reasoning "think", "bc"; role, empty, finish, usage are not tokens
    assert result.chunk_tokens == [1, 3, 2]
    assert (result.output_tokens, result.input_tokens, result.finish_reason) == (7, 5, "stop")
    assert (result.draft_tokens, result.accepted_tokens) == (8, 3)


def test_request_goes_to_the_root_route_with_json(arun: Runner) -> None:
    seen: list[httpx.Request] = []

    async def go() -> None:
        async with _mock_client([VALID_STREAM], seen=seen) as client:
            await client.send(RequestSpec(prompt="x", max_tokens=8, api="completions"))

    arun(go())
    assert seen[0].url.path == "/v1/completions"
    assert json.loads(seen[0].content)["prompt"] == "x"


@pytest.mark.parametrize(
    ("parts", "kind"),
    [
        ([_chat_chunk("a"), b'data: {"error": {"message": "overloaded"}}\n\n'], "stream_broken"),
        ([_chat_chunk("a"), b"data: {not json\n\n"], "bad_response"),
        ([_chat_chunk("a"), _chat_chunk("b")], "stream_broken"),  # ends without [DONE] or finish_reason
        ([_chat_chunk(None, "stop"), b"data: [DONE]\n\n"], "no_tokens"),
        ([b'{"choices": [{"message": {"content": "not streamed"}}]}'], "bad_response"),  # stream ignored
        ([], "bad_response"),  # empty body
    ],
)
def test_mock_stream_failures(arun: Runner, parts: list[bytes], kind: str) -> None:
    result = _send(arun, parts)
    assert (result.ok, result.error_kind) == (False, kind)
    assert result.error


def test_http_error_message_is_extracted(arun: Runner) -> None:
    result = _send(arun, [b'{"error": {"message": "rate limited, slow down"}}'], status=429)
    assert (result.error_kind, result.status_code, result.error) == (
        "http_4xx",
        429,
        "HTTP 429: rate limited, slow down",
    )


def test_native_generate_cumulative_and_incremental_text(arun: Runner) -> None:
    def ev(text: str, ct: int, finish: Any = None) -> bytes:
        meta = {"completion_tokens": ct, "prompt_tokens": 2, "finish_reason": finish, "spec_verify_ct": ct // 2}
        return b"data: " + json.dumps({"text": text, "meta_info": meta}).encode() + b"\n\n"

    spec = RequestSpec(prompt="x", max_tokens=8, api="generate")
    cumulative = _send(
        arun, [ev("", 0), ev("ab", 2), ev("abcd", 4), ev("abcd", 5, {"type": "stop"}), b"data: [DONE]\n\n"], spec
    )
    assert cumulative.ok and cumulative.chunk_tokens == [2, 2] and cumulative.output_tokens == 5
    assert (cumulative.finish_reason, cumulative.verify_steps, cumulative.token_source) == (
        "stop",
        2,
        "server_meta_info",
    )
    incremental = _send(arun, [ev("ab", 2), ev("cd", 4, {"type": "length"}), b"data: [DONE]\n\n"], spec)
    assert incremental.ok and incremental.chunk_tokens == [2, 2] and incremental.finish_reason == "length"


def test_itl_spread_formula_name_when_chunk_tokens_known(arun: Runner) -> None:
    result = _send(arun, [VALID_STREAM])
    level = summarize_level(LevelRun(1, [result], [], result.t_sent_ns, result.t_done_ns or 0, None))
    assert level.itl_ms is not None and level.itl_ms.formula == FORMULA_ITL_SPREAD and level.itl_ms.n == 5


def test_undecodable_body_is_bad_response(arun: Runner) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"not gzip at all", headers={"content-encoding": "gzip"})

    async def go() -> RequestResult:
        transport = httpx.MockTransport(handler)
        async with StreamingClient("http://mock", max_connections=1, transport=transport) as client:
            return await client.send(RequestSpec(prompt="x", max_tokens=8))

    result = arun(go())
    assert (result.ok, result.error_kind) == (False, "bad_response")
    assert result.error is not None and "DecodingError" in result.error


def _disconnecting_client(failures: int, *, after_headers: bool = False) -> tuple[StreamingClient, list[int]]:
    """A transport whose first ``failures`` requests end with the server closing the connection: before any
    response (a stale keep-alive connection), or after the headers and one chunk (a broken stream)."""
    calls: list[int] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) > failures:
            return httpx.Response(200, content=VALID_STREAM, headers={"content-type": "text/event-stream"})
        if not after_headers:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)

        async def stream() -> AsyncIterator[bytes]:
            yield _chat_chunk("a")
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

        return httpx.Response(200, content=stream(), headers={"content-type": "text/event-stream"})

    client = StreamingClient("http://mock", max_connections=1, transport=httpx.MockTransport(handler))
    return client, calls


@pytest.mark.parametrize(
    ("failures", "after_headers", "calls", "kind"),
    [
        (1, False, 2, None),  # a stale connection: sent once more, and measured from the second send
        (2, False, 2, "stream_broken"),  # at most once more
        (1, True, 1, "stream_broken"),  # the server answered, then broke: never sent twice
    ],
)
def test_a_request_the_server_never_answered_is_sent_once_more(
    arun: Runner, failures: int, after_headers: bool, calls: int, kind: str | None
) -> None:
    client, seen = _disconnecting_client(failures, after_headers=after_headers)

    async def go() -> RequestResult:
        async with client:
            return await client.send(RequestSpec(prompt="x", max_tokens=8))

    result = arun(go())
    assert (len(seen), result.error_kind) == (calls, kind)
    assert result.t_start_ns is not None and result.t_start_ns <= result.t_sent_ns
    if kind is None:
        assert result.ok and result.output_tokens == 7 and result.t_sent_ns > result.t_start_ns
    elif not after_headers:
        assert result.error is not None and "second attempt" in result.error
