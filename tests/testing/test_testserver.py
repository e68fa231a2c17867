"""The known-timing test server: its schedule, its wire format, its capacity and its command line."""

from __future__ import annotations

import asyncio
import json
import signal
import statistics
import subprocess
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx
import pytest

from bench.testing.testserver import HEADER, TestServerConfig, chunk_plan, expected_timing, precise_event_loop, serve

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], precise: bool = True) -> T:
    with asyncio.Runner(loop_factory=precise_event_loop if precise else None) as runner:
        return runner.run(coro)


def _events(body: str) -> list[Any]:
    out: list[Any] = []
    for block in body.split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def test_truth_by_hand() -> None:
    assert chunk_plan(64, 3) == [3] * 21 + [1]
    assert chunk_plan(6, 3) == [3, 3]
    t = expected_timing(TestServerConfig(ttft_ms=50, itl_ms=10, tokens_per_chunk=3, output_tokens=64), 100)
    assert (t.output_tokens, t.ttft_ms, t.e2e_ms, t.finish_reason) == (64, 50, 260, "stop")
    assert t.tpot_ms == pytest.approx(210 / 63)
    assert t.itl_ms == pytest.approx([10 / 3] * 60 + [10.0])
    capped = expected_timing(TestServerConfig(output_tokens=64), 10)
    assert (capped.output_tokens, capped.finish_reason) == (10, "length")
    assert expected_timing(TestServerConfig(output_tokens=5), 9, ignore_eos=True).output_tokens == 9


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="tokens_per_chunk"):
        TestServerConfig(tokens_per_chunk=0)
    with pytest.raises(ValueError, match="fail_status"):
        TestServerConfig(fail_status=200)


def test_chat_stream_wire_format() -> None:
    cfg = TestServerConfig(ttft_ms=5, itl_ms=2, tokens_per_chunk=2, output_tokens=5, role_chunk=True,
                           draft_tokens_per_step=3)  # fmt: skip

    async def go() -> httpx.Response:
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            body = {
                "messages": [{"role": "user", "content": "three word prompt"}],
                "max_tokens": 50,
                "stream": True,
                "stream_options": {"include_usage": True, "continuous_usage_stats": True},
            }
            return await client.post("/v1/chat/completions", json=body)

    response = run(go())
    assert response.headers[HEADER] == "1" and response.headers["content-type"] == "text/event-stream"
    events = _events(response.text)
    assert events[-1] == "[DONE]"
    assert events[0]["choices"][0]["delta"] == {"role": "assistant"}
    content = [e for e in events[1:-1] if e["choices"] and e["choices"][0]["delta"].get("content")]
    assert "".join(e["choices"][0]["delta"]["content"] for e in content) == " w0 w1 w2 w3 w4"
    assert [e["usage"]["completion_tokens"] for e in content] == [2, 4, 5]  # cumulative, per chunk
    finish = events[-3]
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert finish["timings"] == {"predicted_n": 5, "draft_n": 9, "draft_n_accepted": 2}
    assert events[-2]["choices"] == [] and events[-2]["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 5,
        "total_tokens": 8,
    }


def test_no_usage_and_native_generate_and_non_streaming() -> None:
    async def go() -> tuple[str, str, dict[str, Any]]:
        cfg = TestServerConfig(ttft_ms=1, itl_ms=1, output_tokens=3)
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            completions = {"prompt": "p", "max_tokens": 3, "stream": True, "stream_options": {"include_usage": True}}
            plain = await client.post("/v1/completions", json={**completions, "benchbook_test": {"usage": False}})
            native = await client.post(
                "/generate", json={"text": "a b", "sampling_params": {"max_new_tokens": 2}, "stream": True}
            )
            whole = await client.post("/v1/chat/completions", json={"messages": [], "max_tokens": 3})
            return plain.text, native.text, whole.json()

    plain, native, whole = run(go())
    assert "usage" not in plain and "".join(e["choices"][0]["text"] for e in _events(plain)[:-1]) == " w0 w1 w2"
    events = _events(native)
    assert [e["text"] for e in events[:-1]] == [" w0", " w0 w1"]  # SGLang streams the cumulative text
    assert [e["output_ids"] for e in events[:-1]] == [[0], [0, 1]]  # and every output id so far
    assert events[-2]["meta_info"]["completion_tokens"] == 2
    assert events[-2]["meta_info"]["finish_reason"] == {"type": "length", "length": 2}
    assert events[0]["meta_info"]["finish_reason"] is None and "cached_tokens" not in events[0]["meta_info"]
    assert whole["choices"][0]["message"]["content"] == " w0 w1 w2" and whole["usage"]["completion_tokens"] == 3


def test_other_routes_and_bad_requests() -> None:
    async def go() -> list[httpx.Response]:
        async with serve(TestServerConfig(model="m1")) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            return [
                await client.get("/health"),
                await client.get("/v1/models"),
                await client.get("/nope"),
                await client.get("/v1/completions"),
                await client.post("/v1/completions", content=b"{not json"),
                await client.post("/v1/completions", json={"prompt": "x", "benchbook_test": {"ttft": 1}}),
                await client.post("/v1/completions", json={"prompt": "x", "max_tokens": 0}),
            ]

    health, models, missing, wrong_method, bad_json, bad_override, bad_max = run(go())
    assert health.status_code == 200 and health.headers[HEADER] == "1"
    model = models.json()["data"][0]
    assert model["id"] == "m1" and model["owned_by"] == "benchbook-testserver" and model["benchbook_test_server"]
    assert (missing.status_code, wrong_method.status_code, bad_json.status_code) == (404, 405, 400)
    assert bad_override.status_code == 400 and "ttft" in bad_override.json()["error"]["message"]
    assert bad_max.status_code == 400 and "max_tokens" in bad_max.json()["error"]["message"]


def test_mid_stream_close_leaves_an_incomplete_body() -> None:
    async def go() -> None:
        cfg = TestServerConfig(ttft_ms=1, itl_ms=1, fail_after_chunks=2)
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            await client.post("/v1/completions", json={"prompt": "x", "max_tokens": 9, "stream": True})

    with pytest.raises(httpx.RemoteProtocolError):
        run(go())


def test_chunks_leave_on_their_deadlines() -> None:
    cfg = TestServerConfig(ttft_ms=20, itl_ms=10, tokens_per_chunk=2, output_tokens=20)

    async def go() -> list[float]:
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            for _ in range(3):
                await client.post("/v1/completions", json={"prompt": "x", "max_tokens": 20, "stream": True})
            truth = expected_timing(cfg, 20).chunk_offsets_ms
            late = []
            for log in srv.stats.streams:
                late += [(e - log.t0_ns) / 1e6 - t for e, t in zip(log.emit_ns, truth, strict=True)]
            assert srv.stats.as_json()["lateness_ms"]["n"] == len(late)
            return late

    late = run(go())
    assert len(late) == 30 and min(late) >= 0.0
    # select() timers wake within microseconds when the machine is not saturated: a tenth of the chunk interval
    # leaves room for a busy machine and still makes the schedule the truth the harness tests rely on
    assert statistics.median(late) <= 0.1 * cfg.itl_ms


def test_sustains_a_thousand_concurrent_streams() -> None:
    """1000 raw HTTP/1.1 streams at once on the default epoll loop (select() stops at 1024 descriptors)."""
    cfg = TestServerConfig(ttft_ms=800, itl_ms=20, output_tokens=3)  # long enough for all to connect first
    n = 1000

    async def one(port: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"prompt": "x", "max_tokens": 3, "stream": true}'
        writer.write(b"POST /v1/completions HTTP/1.1\r\nhost: t\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        data = b""
        while not data.endswith(b"0\r\n\r\n"):
            chunk = await reader.read(65536)
            if not chunk:
                break
            data += chunk
        writer.close()
        return data

    async def go() -> tuple[list[bytes], int]:
        async with serve(cfg) as srv:
            bodies = await asyncio.gather(*(one(srv.port) for _ in range(n)))
            return bodies, srv.stats.max_in_flight

    bodies, peak = run(go(), precise=False)
    assert peak == n
    assert all(b.count(b"data: ") == 5 and b"[DONE]" in b for b in bodies)  # 3 tokens, finish, [DONE]


def test_command_line_serves_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.testing.testserver",
            "--port",
            "0",
            "--ttft-ms",
            "1",
            "--itl-ms",
            "1",
            "--no-usage",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("benchbook-testserver listening on http://127.0.0.1:")
        url = line.split()[-1]
        response = httpx.post(f"{url}/v1/completions", json={"prompt": "x", "max_tokens": 2, "stream": True})
        assert response.headers[HEADER] == "1" and "usage" not in response.text and "[DONE]" in response.text
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


def test_command_line_refuses_a_bad_configuration() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.testing.testserver", "--port", "0", "--tokens-per-chunk", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "tokens_per_chunk must be >= 1" in proc.stderr


def test_sglang_generate_modes_speculative_counters_and_cached_tokens() -> None:
    """The /generate layout of SGLang 0.5.17 (tests/runner/fixtures/sglang/): cumulative or incremental chunks,
    cumulative meta_info counters; cached prompt tokens on every API."""
    cfg = TestServerConfig(ttft_ms=1, itl_ms=1, tokens_per_chunk=3, output_tokens=7, draft_tokens_per_step=4)
    gen = {"text": "a b c d", "sampling_params": {"max_new_tokens": 9}, "stream": True}

    async def go() -> list[str]:
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            cumulative = await client.post("/generate", json={**gen, "benchbook_test": {"cached_tokens": 3}})
            incremental = await client.post("/generate", json={**gen, "benchbook_test": {"incremental_output": True}})
            chat = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "a b"}], "stream": True,
                      "stream_options": {"include_usage": True}, "benchbook_test": {"cached_tokens": 5}},
            )  # fmt: skip
            return [cumulative.text, incremental.text, chat.text]

    cumulative, incremental, chat = (_events(t)[:-1] for t in run(go()))
    assert [e["output_ids"] for e in cumulative] == [[0, 1, 2], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5, 6]]
    assert [e["text"] for e in cumulative][-1] == " w0 w1 w2 w3 w4 w5 w6"
    assert [e["output_ids"] for e in incremental] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [e["text"] for e in incremental] == [" w0 w1 w2", " w3 w4 w5", " w6"]
    last = cumulative[-1]["meta_info"]
    assert last["finish_reason"] == {"type": "stop"} and last["completion_tokens"] == 7
    assert (last["prompt_tokens"], last["cached_tokens"]) == (4, 3)
    # 3 chunks = 3 verify steps of 4 proposed drafts; 7 tokens = 3 steps + 4 accepted drafts
    assert (last["spec_verify_ct"], last["spec_proposed_drafts"], last["spec_accepted_drafts"]) == (3, 12, 4)
    assert (last["spec_num_proposed_drafts"], last["spec_num_correct_drafts"]) == (12, 4)
    assert last["spec_accept_length"] == 7 / 3 and last["spec_accept_rate"] == 4 / 12
    assert [e["meta_info"]["spec_verify_ct"] for e in incremental] == [1, 2, 3]
    usage = chat[-1]["usage"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 2}  # capped at the prompt's 2 tokens
    assert chat[-2]["timings"]["cache_n"] == 2


def test_prefix_cache_simulation() -> None:
    cfg = TestServerConfig(ttft_ms=1, itl_ms=1, output_tokens=1, prefix_cache=True)
    prompts = ["sys one two three", "sys one two four", "sys one two three", "x sys one two three", "sys"]

    async def go() -> list[int]:
        async with serve(cfg) as srv, httpx.AsyncClient(base_url=srv.url) as client:
            out = []
            for p in prompts:
                r = await client.post("/generate", json={"text": p, "sampling_params": {"max_new_tokens": 1}})
                out.append(r.json()["meta_info"]["cached_tokens"])
            return out

    # nothing before; 3 shared words; all but the last word (a cache computes at least one token); a new first
    # word shares no prefix; a one-word prompt repeats but still computes its one token
    assert run(go()) == [0, 3, 3, 0, 0]


def test_fault_modes_on_the_wire() -> None:
    body = {"prompt": "x", "max_tokens": 4, "stream": True}

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with (
            serve(TestServerConfig(ttft_ms=1, itl_ms=1, ready=False)) as srv,
            httpx.AsyncClient(base_url=srv.url) as client,
        ):
            out["health"] = await client.get("/health")
            out["html"] = await client.post("/v1/completions", json={**body, "benchbook_test": {"bad_body": "html"}})
            bad = {**body, "benchbook_test": {"bad_body": "malformed_sse"}}
            out["malformed"] = await client.post("/v1/completions", json=bad)
        async with (
            serve(TestServerConfig(ttft_ms=300, itl_ms=1, max_streams=1)) as srv,
            httpx.AsyncClient(base_url=srv.url) as client,
        ):
            out["busy"] = await asyncio.gather(*(client.post("/v1/completions", json=body) for _ in range(2)))
        async with (
            serve(TestServerConfig(ttft_ms=1, itl_ms=1, hang_after_chunks=1)) as srv,
            httpx.AsyncClient(base_url=srv.url) as client,
        ):
            received = b""
            t0 = asyncio.get_running_loop().time()
            async with client.stream("POST", "/v1/completions", json=body) as response:
                async for chunk in response.aiter_bytes():
                    received += chunk
                    if asyncio.get_running_loop().time() - t0 > 1.2:
                        break
            out["hang"] = received.decode()
        return out

    out = run(go())
    assert out["health"].status_code == 503 and out["health"].json() == {"status": "loading"}
    html = out["html"]
    assert html.status_code == 200 and html.headers["content-type"] == "text/html"
    assert html.text.startswith("<!DOCTYPE html>")
    malformed = out["malformed"]
    assert malformed.status_code == 200 and malformed.headers["content-type"] == "text/event-stream"
    first = malformed.text.split("\n\n")[0].removeprefix("data: ")
    with pytest.raises(ValueError):
        json.loads(first)
    assert sorted(r.status_code for r in out["busy"]) == [200, 503]
    busy = next(r for r in out["busy"] if r.status_code == 503)
    assert busy.json()["error"]["message"] == "over capacity: 1 streams in flight"
    hang = out["hang"]
    assert hang.count("data: {") == 1 and "[DONE]" not in hang  # one token, then nothing but keep-alive comments
    assert hang.count(": still working") >= 2


def test_pause_file_holds_tokens_while_it_exists(tmp_path: Any) -> None:
    pause = tmp_path / "pause"
    body = {"prompt": "x", "max_tokens": 6, "stream": True}

    async def go() -> tuple[str, str, float]:
        loop = asyncio.get_running_loop()
        received: list[tuple[float, bytes]] = []

        def text() -> str:
            return b"".join(c for _, c in received).decode()

        async with (
            serve(TestServerConfig(ttft_ms=1, itl_ms=100, pause_file=str(pause))) as srv,
            httpx.AsyncClient(base_url=srv.url) as client,
            client.stream("POST", "/v1/completions", json=body) as response,
        ):

            async def read() -> None:
                async for chunk in response.aiter_bytes():
                    received.append((loop.time(), chunk))

            reader = asyncio.create_task(read())
            while text().count("data: {") < 2:
                await asyncio.sleep(0.005)
            pause.touch()
            await asyncio.sleep(1.2)
            held = text()
            pause.unlink()
            resumed = loop.time()
            await asyncio.wait_for(reader, timeout=5)
        return held, text(), received[-1][0] - resumed

    held, whole, after = run(go())
    # at most the token already on its way once the file exists, then keep-alive comments only
    assert held.count("data: {") <= 3 and "[DONE]" not in held and held.count(": still working") >= 2
    events = _events(whole)
    assert events[-1] == "[DONE]" and sum(1 for e in events if isinstance(e, dict) and e["choices"][0]["text"]) == 6
    assert after < 1.0  # the rest comes within ~50 ms of the file's removal, not after a timeout


def test_fault_fields_are_validated() -> None:
    with pytest.raises(ValueError, match="hang_after_chunks must be >= 0"):
        TestServerConfig(hang_after_chunks=-1)
    with pytest.raises(ValueError, match="bad_body"):
        TestServerConfig(bad_body="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_streams"):
        TestServerConfig(max_streams=0)


def test_command_line_process_faults() -> None:
    start = subprocess.run(
        [sys.executable, "-m", "bench.testing.testserver", "--port", "0", "--exit-at-start", "3"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert start.returncode == 3 and "injected start-up failure (--exit-at-start 3)" in start.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.testing.testserver", "--port", "0", "--ttft-ms", "1", "--itl-ms", "1",
         "--die-after-requests", "2", "--ignore-sigterm"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[-1]
        proc.send_signal(signal.SIGTERM)  # ignored
        body = {"prompt": "x", "max_tokens": 2, "stream": True}
        assert "[DONE]" in httpx.post(f"{url}/v1/completions", json=body).text
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(f"{url}/v1/completions", json=body)  # request 2: the process kills itself
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
