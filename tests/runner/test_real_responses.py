"""Real server responses replayed through the client and the level aggregation (fixtures: see their READMEs).

Every expected number below was read off the fixture files by hand (token ids counted, meta_info and usage
fields copied), not produced by the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.record.model import Level
from bench.runner._native import split_chunk
from bench.runner.client import StreamingClient
from bench.runner.config import RunConfig
from bench.runner.engines.sglang import SGLangEngine
from bench.runner.load_generator import LevelRun
from bench.runner.metrics import FORMULA_ACCEPT_LENGTH, FORMULA_ACCEPTANCE_RATE, summarize_level
from bench.runner.request import RequestResult, RequestSpec

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
FIXTURES = Path(__file__).parent / "fixtures"
SGLANG = FIXTURES / "sglang"
LLAMACPP = FIXTURES / "llamacpp"


def _body(path: Path) -> bytes:
    raw = path.read_bytes()
    if path.suffix == ".json":  # a whole non-streamed /generate body: the layout of one streamed chunk
        return b"data: " + raw.strip() + b"\n\n"
    return raw


def replay(arun: Runner, path: Path, api: str) -> RequestResult:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=_body(path), headers={"content-type": "text/event-stream"})

    async def go() -> RequestResult:
        transport = httpx.MockTransport(handler)
        async with StreamingClient("http://replay", max_connections=1, transport=transport) as client:
            return await client.send(RequestSpec(prompt="x", max_tokens=128, api=api))  # type: ignore[arg-type]

    result: RequestResult = arun(go())
    return result


def level_of(results: list[RequestResult], speculative_method: str | None = None) -> Level:
    start = min(r.t_sent_ns for r in results)
    end = max(r.t_done_ns or 0 for r in results)
    return summarize_level(LevelRun(1, results, [], start, end, None), speculative_method=speculative_method)


@pytest.mark.parametrize(
    "name",
    [
        "baseline-generate-stream.sse",
        "baseline-generate-nonstream.json",
        "ngram-generate-stream.sse",
        "ngram-generate-nonstream.json",
        *(f"full/{n}-generate-stream.sse" for n in ("baseline", "incremental", "ngram", "eagle3-tree", "eagle3-chain")),
    ],
)
def test_split_reads_real_chunks_as_a_whole_decode_does(name: str) -> None:
    """The client reads large /generate chunks by decoding meta_info only; on every real chunk that must give
    what decoding it whole gives."""
    events = [e[len("data: ") :] for e in _body(SGLANG / name).decode().split("\n\n") if e.startswith("data: {")]
    assert events
    for data in events:
        chunk = split_chunk(data)
        whole = json.loads(data)
        assert chunk is not None and chunk.meta == whole["meta_info"] and chunk.ids == len(whole["output_ids"])
        assert chunk.decoded_chars < len(data)


def test_sglang_generate_cumulative_stream_counts_new_output_ids(arun: Runner) -> None:
    r = replay(arun, SGLANG / "baseline-generate-stream.sse", "generate")
    assert r.ok, r.error
    # first chunk: output_ids [7042]; last chunk repeats it and adds 29 more (30 ids, completion_tokens 30)
    assert r.chunk_tokens == [1, 29] and len(r.chunk_times_ns) == 2
    assert r.stream_mode == "cumulative"
    assert (r.output_tokens, r.token_source, r.input_tokens) == (30, "server_meta_info", 5)
    assert (r.cached_tokens, r.cached_source) == (2, "meta_info.cached_tokens")
    assert r.finish_reason == "stop"
    assert (r.verify_steps, r.draft_tokens, r.accepted_tokens) == (None, None, None)
    assert r.t_first_ns == r.chunk_times_ns[0]


def test_sglang_baseline_level_prefix_cache(arun: Runner) -> None:
    stream = replay(arun, SGLANG / "baseline-generate-stream.sse", "generate")
    whole = replay(arun, SGLANG / "baseline-generate-nonstream.json", "generate")
    assert (whole.output_tokens, whole.input_tokens, whole.cached_tokens, whole.finish_reason) == (16, 5, 4, "length")
    assert whole.chunk_tokens == [16]
    lv = level_of([stream, whole])
    assert lv.prefix_cache is not None
    pc = lv.prefix_cache
    assert (pc.cached_tokens, pc.input_tokens, pc.requests) == (2 + 4, 5 + 5, 2)
    assert pc.hit_share == 0.6
    assert pc.source.startswith("meta_info.cached_tokens")
    assert lv.samples is not None and lv.samples.cached_tokens == [2, 4]
    assert lv.output_tokens is not None and lv.output_tokens.total == 46
    assert lv.speculative is None  # a plain server: no speculative counts, and none expected


def test_sglang_ngram_level_both_speculative_figures(arun: Runner) -> None:
    stream = replay(arun, SGLANG / "ngram-generate-stream.sse", "generate")
    whole = replay(arun, SGLANG / "ngram-generate-nonstream.json", "generate")
    assert stream.ok and whole.ok
    assert stream.chunk_tokens == [96] and whole.chunk_tokens == [4]
    assert (stream.output_tokens, stream.input_tokens, stream.cached_tokens) == (96, 47, 0)
    assert (whole.output_tokens, whole.input_tokens, whole.cached_tokens) == (4, 47, 46)
    assert (stream.verify_steps, stream.accepted_tokens, stream.draft_tokens) == (16, 80, 112)
    assert (whole.verify_steps, whole.accepted_tokens, whole.draft_tokens) == (3, 0, 21)
    assert stream.draft_source == "meta_info.spec_accepted_drafts/spec_proposed_drafts"
    # the server's own per-request figures agree with the inputs: the cross-check
    assert stream.server_accept_length == 6.0 == 96 / 16
    assert stream.server_accept_rate == 80 / 112
    assert whole.server_accept_length == 4 / 3 and whole.server_accept_rate == 0.0

    lv = level_of([stream, whole])
    spec = lv.speculative
    assert spec is not None and spec.accept_length is not None and spec.acceptance_rate is not None
    assert (spec.output_tokens, spec.verify_steps) == (96 + 4, 16 + 3)
    assert (spec.accepted_tokens, spec.draft_tokens) == (80 + 0, 112 + 21)
    assert spec.accept_length.value == round(100 / 19, 4) == 5.2632
    assert spec.acceptance_rate.value == round(80 / 133, 6) == 0.601504
    assert spec.accept_length.formula == FORMULA_ACCEPT_LENGTH and spec.accept_length.n == 2
    assert spec.acceptance_rate.formula == FORMULA_ACCEPTANCE_RATE and spec.acceptance_rate.n == 2
    assert spec.accept_length.source is not None and "spec_verify_ct" in spec.accept_length.source
    assert spec.acceptance_rate.source == "meta_info.spec_accepted_drafts/spec_proposed_drafts per request"
    assert spec.accept_length.note is None  # the cross-check found no disagreement
    assert spec.missing == [] and spec.requests == 2
    pc = lv.prefix_cache
    assert pc is not None and (pc.cached_tokens, pc.input_tokens, pc.hit_share) == (46, 94, round(46 / 94, 6))


def test_sglang_chat_stream_gives_no_speculative_or_cache_figures(arun: Runner) -> None:
    chat = replay(arun, SGLANG / "baseline-chat-stream.sse", "chat")
    assert chat.ok and len(chat.chunk_times_ns) == 1  # the role chunk carries no token; "The" does
    assert (chat.output_tokens, chat.input_tokens, chat.finish_reason) == (8, 42, "stop")
    assert chat.cached_tokens is None  # prompt_tokens_details: null without --enable-cache-report
    # the NGRAM server's chat tail: usage without any speculative field (the probe kept no content chunk)
    tail = replay(arun, SGLANG / "ngram-chat-stream.sse", "chat")
    assert (tail.error_kind, tail.output_tokens, tail.input_tokens) == ("no_tokens", 16, 77)
    assert (tail.verify_steps, tail.draft_tokens, tail.accepted_tokens, tail.cached_tokens) == (None,) * 4

    cfg = RunConfig(
        experiment="x",
        variant="ngram-chat",
        engine="sglang",
        prompt_set="coding-agentic",
        api="chat",
        server_args={"speculative-algorithm": "NGRAM", "speculative-num-draft-tokens": 8},
    )
    method = SGLangEngine().speculative_method(cfg)
    assert method is not None
    lv = level_of([chat], speculative_method=method)
    spec = lv.speculative
    assert spec is not None and spec.accept_length is None and spec.acceptance_rate is None
    assert [m.split(":")[0] for m in spec.missing] == ["accept_length", "acceptance_rate"]
    assert spec.method == method and "generate" in method
    assert lv.prefix_cache is None


def test_llamacpp_cache_n_and_draft_counts(arun: Runner) -> None:
    cold = replay(arun, LLAMACPP / "llamacpp-ngram-chat-cold.sse", "chat")
    warm = replay(arun, LLAMACPP / "llamacpp-ngram-chat-repeat.sse", "chat")
    for r in (cold, warm):
        assert r.ok and len(r.chunk_times_ns) == 32 and r.output_tokens == 32 and r.input_tokens == 40
        assert (r.draft_tokens, r.accepted_tokens, r.draft_source) == (16, 14, "timings.draft_n_accepted/draft_n")
        assert r.cached_source == "usage.prompt_tokens_details.cached_tokens"
    assert (cold.cached_tokens, warm.cached_tokens) == (0, 39)
    lv = level_of([cold, warm])
    spec = lv.speculative
    assert spec is not None and spec.acceptance_rate is not None
    assert spec.acceptance_rate.value == round(28 / 32, 6)
    assert spec.accept_length is None and spec.verify_steps is None  # llama-server reports no verify steps
    assert spec.missing and spec.missing[0].startswith("accept_length:")
    pc = lv.prefix_cache
    assert pc is not None and (pc.cached_tokens, pc.input_tokens, pc.hit_share) == (39, 80, 0.4875)


# --- whole streams from the second H200 session (fixtures/sglang/full, see the README) ----------------------------
FULL = SGLANG / "full"
# output_ids per event, read off each file's events (cumulative: each event repeats every id so far)
FULL_IDS = {
    "baseline": list(range(1, 25)),
    "eagle3-tree": [1, 3, 5, 8, 11, 13, 15, 18, 20, 24],
    "eagle3-chain": [1, 3, 5, 8, 9, 11, 12, 16, 17, 18, 19, 20, 21, 23, 24],
    "ngram": [1, 2, 4, 6, 7, 9, 11, 13, 14, 17, 18, 19, 20, 22, 24],
}
# the last event's meta_info: (spec_verify_ct, spec_proposed_drafts, spec_accepted_drafts)
FULL_SPEC = {"eagle3-tree": (9, 135, 14), "eagle3-chain": (14, 42, 9), "ngram": (14, 98, 9)}


@pytest.mark.parametrize("name", sorted(FULL_IDS))
def test_full_cumulative_streams_time_each_new_token(arun: Runner, name: str) -> None:
    """Every event of a whole /generate stream: the tokens each chunk adds are the growth of output_ids, so a
    speculative server's multi-token steps show as chunks of 2-4 tokens at one timestamp."""
    ids = FULL_IDS[name]
    r = replay(arun, FULL / f"{name}-generate-stream.sse", "generate")
    assert r.ok, r.error
    assert r.stream_mode == "cumulative"
    assert r.chunk_tokens == [b - a for a, b in zip([0, *ids], ids, strict=False)]
    assert len(r.chunk_times_ns) == len(ids) and sum(r.chunk_tokens) == 24
    assert (r.output_tokens, r.input_tokens, r.cached_tokens, r.finish_reason) == (24, 10, 0, "length")
    if name in FULL_SPEC:
        assert (r.verify_steps, r.draft_tokens, r.accepted_tokens) == FULL_SPEC[name]
        assert r.server_accept_length == 24 / FULL_SPEC[name][0]
    else:
        assert (r.verify_steps, r.draft_tokens, r.accepted_tokens) == (None, None, None)


def test_incremental_streaming_output_is_read_as_such(arun: Runner) -> None:
    """--incremental-streaming-output: each of the 24 events carries only its one new id; counted once each."""
    r = replay(arun, FULL / "incremental-generate-stream.sse", "generate")
    assert r.ok and r.stream_mode == "incremental"
    assert r.chunk_tokens == [1] * 24 and r.output_tokens == 24


def test_eagle3_level_from_whole_streams(arun: Runner) -> None:
    tree = replay(arun, FULL / "eagle3-tree-generate-stream.sse", "generate")
    chain = replay(arun, FULL / "eagle3-chain-generate-stream.sse", "generate")
    spec = level_of([tree, chain]).speculative
    assert spec is not None and spec.accept_length is not None and spec.acceptance_rate is not None
    assert (spec.output_tokens, spec.verify_steps) == (48, 9 + 14)
    assert (spec.accepted_tokens, spec.draft_tokens) == (14 + 9, 135 + 42)
    assert spec.accept_length.value == round(48 / 23, 4)
    assert spec.acceptance_rate.value == round(23 / 177, 6)


def test_chat_route_cached_tokens_only_when_the_server_states_them(arun: Runner) -> None:
    """With --enable-cache-report SGLang's chat usage holds prompt_tokens_details.cached_tokens when a prefix was
    cached (the baseline server, 24 of 37), and null when none was (the incremental server): unknown, not 0."""
    cached = replay(arun, FULL / "baseline-chat-stream.sse", "chat")
    assert (cached.output_tokens, cached.input_tokens, cached.cached_tokens) == (24, 37, 24)
    assert cached.cached_source == "usage.prompt_tokens_details.cached_tokens"
    none = replay(arun, FULL / "incremental-chat-stream.sse", "chat")
    assert (none.output_tokens, none.input_tokens, none.cached_tokens) == (24, 37, None)
    for name in ("eagle3-tree", "eagle3-chain", "ngram"):
        chat = replay(arun, FULL / f"{name}-chat-stream.sse", "chat")
        assert chat.ok and chat.output_tokens == 24
        assert (chat.verify_steps, chat.draft_tokens, chat.accepted_tokens) == (None, None, None)
