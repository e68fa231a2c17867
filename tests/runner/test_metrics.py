"""Level metrics from hand-built results: every figure checked against arithmetic done by hand."""

from __future__ import annotations

from typing import Any

import pytest

from bench.record.model import Level
from bench.runner._stats import describe
from bench.runner.load_generator import LevelRun
from bench.runner.metrics import (
    FORMULA_ITL_ONE_PER_CHUNK,
    FORMULA_ITL_SPREAD,
    FORMULA_ITL_UNKNOWN_CHUNKING,
    FORMULA_TPOT,
    FORMULA_TTFT,
    itl_samples_ms,
    summarize_level,
)
from bench.runner.request import RequestResult

MS = 1_000_000


def ok(
    sent_ms: float,
    chunks_ms: list[float],
    *,
    tokens: list[int] | None = None,
    out: int | None = None,
    inp: int | None = None,
    finish: str | None = "length",
    source: str = "server_usage",
    **extra: Any,
) -> RequestResult:
    times = [int((sent_ms + c) * MS) for c in chunks_ms]
    return RequestResult(
        ok=True,
        t_sent_ns=int(sent_ms * MS),
        t_first_ns=times[0],
        t_last_ns=times[-1],
        t_done_ns=times[-1] + MS,
        chunk_times_ns=times,
        chunk_tokens=tokens,
        output_tokens=out if out is not None or tokens is None else sum(tokens),
        input_tokens=inp,
        token_source=source if (out is not None or tokens is not None) else "unknown",
        finish_reason=finish,
        input_token_source="server_usage" if inp is not None else "unknown",
        **extra,
    )


def failed(sent_ms: float, kind: str, message: str) -> RequestResult:
    return RequestResult(
        ok=False,
        t_sent_ns=int(sent_ms * MS),
        t_first_ns=None,
        t_last_ns=None,
        t_done_ns=int((sent_ms + 1) * MS),
        chunk_times_ns=[],
        chunk_tokens=None,
        output_tokens=None,
        input_tokens=None,
        token_source="unknown",
        finish_reason=None,
        error_kind=kind,
        error=message,
    )


def level(results: list[RequestResult], start_ms: float, end_ms: float, **kw: object) -> Level:
    run = LevelRun(4, results, [], int(start_ms * MS), int(end_ms * MS), None)
    return summarize_level(run, **kw)  # type: ignore[arg-type]


# ---- stats -------------------------------------------------------------------------------------------------


def test_describe_by_hand() -> None:
    d = describe([float(v) for v in range(1, 11)])
    assert d is not None and (d.p50, d.p90, d.p99) == pytest.approx((5.5, 9.1, 9.91))  # linear, between ranks
    one = describe([7.0])
    assert one is not None and (one.p50, one.p99, one.stdev) == (7.0, 7.0, None)
    d = describe([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert d is not None and (d.n, d.mean, d.min, d.max) == (8, 5.0, 2.0, 9.0)
    assert d.stdev == pytest.approx(2.138, abs=1e-3)  # sample standard deviation
    assert describe([]) is None


# ---- ITL ---------------------------------------------------------------------------------------------------


def test_itl_spreads_each_gap_over_the_chunk_tokens() -> None:
    r = ok(0, [50, 60, 70, 76], tokens=[1, 3, 2, 1])
    samples, formula = itl_samples_ms(r)
    assert formula == FORMULA_ITL_SPREAD
    assert samples == pytest.approx([10 / 3] * 3 + [5.0] * 2 + [6.0])


def test_itl_zero_token_chunk_passes_its_gap_on() -> None:
    r = ok(0, [10, 14, 20], tokens=[1, 0, 2])
    samples, _ = itl_samples_ms(r)
    assert samples == pytest.approx([5.0, 5.0])  # 4 + 6 ms over the two tokens of the third chunk


def test_itl_one_token_per_chunk_when_counts_match() -> None:
    samples, formula = itl_samples_ms(ok(0, [10, 12, 15, 19], out=4))
    assert formula == FORMULA_ITL_ONE_PER_CHUNK and samples == pytest.approx([2.0, 3.0, 4.0])


def test_itl_unknown_chunking_divides_by_mean_tokens_per_chunk() -> None:
    samples, formula = itl_samples_ms(ok(0, [10, 16, 22], out=7))  # 3 chunks, 7 tokens: (7-1)/(3-1) = 3
    assert formula == FORMULA_ITL_UNKNOWN_CHUNKING and samples == pytest.approx([2.0, 2.0])


def test_itl_impossible_without_counts() -> None:
    assert itl_samples_ms(ok(0, [10, 16, 22])) == ([], None)
    assert itl_samples_ms(ok(0, [10], tokens=[3])) == ([], None)


# ---- one level ---------------------------------------------------------------------------------------------


def test_latency_figures() -> None:
    a = ok(0, [100, 110, 120, 130], tokens=[1, 1, 1, 1], inp=10)  # ttft 100, e2e 130, tpot 10
    b = ok(5, [200, 230], tokens=[1, 3], inp=20)  # ttft 200, e2e 230, tpot 30/3 = 10, itl 10,10,10
    lv = level([a, b], 0, 240)
    assert lv.ttft_ms is not None and lv.ttft_ms.formula == FORMULA_TTFT
    assert (lv.ttft_ms.n, lv.ttft_ms.mean, lv.ttft_ms.min, lv.ttft_ms.max) == (2, 150.0, 100.0, 200.0)
    assert lv.e2e_ms is not None and lv.e2e_ms.mean == 180.0
    assert lv.tpot_ms is not None and lv.tpot_ms.formula == FORMULA_TPOT and lv.tpot_ms.mean == 10.0
    assert lv.itl_ms is not None and lv.itl_ms.n == 6 and lv.itl_ms.p50 == 10.0
    # per-request tok/s: 4 tokens / 30 ms and 4 tokens / 30 ms; over e2e: 4/130 ms and 4/230 ms
    assert lv.per_request_tok_s is not None and lv.per_request_tok_s.mean == pytest.approx(4 / 0.030, abs=1e-3)
    assert lv.per_request_tok_s_e2e is not None
    assert lv.per_request_tok_s_e2e.mean == pytest.approx((4 / 0.130 + 4 / 0.230) / 2, abs=1e-3)
    assert lv.samples is not None and lv.samples.ttft_ms == [100.0, 200.0] and lv.samples.input_tokens == [10, 20]


def test_throughput_over_the_window() -> None:
    a = ok(0, [100, 1000], tokens=[1, 99], inp=50)
    b = ok(0, [100, 1500], tokens=[1, 199], inp=150)
    lv = level([a, b], 0, 2000)  # 2 s window
    assert lv.duration_s == 2.0
    assert lv.output_throughput is not None and lv.output_throughput.value == 150.0  # 300 tokens / 2 s
    assert lv.total_throughput is not None and lv.total_throughput.value == 250.0  # (200 + 300) / 2 s
    assert lv.request_throughput is not None and lv.request_throughput.value == 1.0
    assert lv.output_tokens is not None and (lv.output_tokens.total, lv.output_tokens.source) == (300, "server_usage")
    assert lv.input_tokens is not None and lv.input_tokens.total == 200


def test_failed_requests_count_in_the_error_rate_not_in_latency_or_throughput() -> None:
    results = [ok(i * 10, [50, 60], tokens=[1, 1]) for i in range(9)] + [failed(95, "http_5xx", "HTTP 500: boom")]
    lv = level(results, 0, 1000, error_threshold=0.05)
    assert (lv.requests_sent, lv.requests_completed, lv.requests_failed) == (10, 9, 1)
    assert lv.errors is not None and lv.errors.by_kind == {"http_5xx": 1}
    assert lv.errors.error_rate == 0.1 and lv.errors.flagged
    assert lv.errors.examples == ["http_5xx: HTTP 500: boom"]
    assert lv.output_throughput is not None and lv.output_throughput.value == 18.0  # 18 tokens / 1 s
    assert lv.ttft_ms is not None and lv.ttft_ms.n == 9
    assert not level(results, 0, 1000, error_threshold=0.2).errors.flagged  # type: ignore[union-attr]
    assert (
        lv.failed and lv.failure == "error rate 10% (1 of 10 requests failed: http_5xx 1) above the error threshold 5%"
    )


def test_a_level_fails_only_above_its_threshold() -> None:
    results = [ok(i * 10, [50, 60], tokens=[1, 1]) for i in range(18)]
    results += [failed(1, "timeout", "t"), failed(2, "http_5xx", "x")]  # 2 of 20 = 10%
    assert level(results, 0, 1000, error_threshold=0.1).failure is None  # at the threshold: still valid
    lv = level(results, 0, 1000, error_threshold=0.095)
    assert lv.failure == (
        "error rate 10% (2 of 20 requests failed: http_5xx 1, timeout 1) above the error threshold 9.5%"
    )
    assert level([failed(i, "connect", "refused") for i in range(3)], 0, 10, error_threshold=1.0).failure is None
    assert level([], 0, 0).failure is None  # nothing sent: nothing failed


def test_error_examples_are_few_distinct_and_truncated() -> None:
    results = [failed(i, "connect", f"refused {i % 7} " + "x" * 500) for i in range(20)]
    lv = level(results, 0, 100)
    assert lv.errors is not None and len(lv.errors.examples) == 5
    assert all(len(e) <= 200 for e in lv.errors.examples)
    assert lv.ttft_ms is None and lv.output_throughput is None and lv.samples is None
    assert lv.errors.error_rate == 1.0


def test_unknown_token_counts_are_never_guessed() -> None:
    known = ok(0, [10, 20], tokens=[1, 1])
    unknown = ok(0, [10, 20, 30])  # server gave no usage
    lv = level([known, unknown], 0, 100)
    assert lv.output_tokens is not None and lv.output_tokens.total is None and lv.output_tokens.source == "unknown"
    assert lv.output_throughput is None and lv.total_throughput is None
    assert lv.tpot_ms is not None and lv.tpot_ms.n == 1  # only the request with a count
    assert lv.samples is not None and lv.samples.output_tokens == [2, None]


def test_finish_reasons_and_samples_switch() -> None:
    results = [ok(0, [1, 2], tokens=[1, 1], finish="stop"), ok(0, [1, 2], tokens=[1, 1]), ok(0, [1, 2], tokens=[1, 1])]
    lv = level(results, 0, 10, keep_samples=False)
    assert lv.finish_reasons == {"stop": 1, "length": 2}
    assert lv.samples is None


def test_speculative_accept_length_and_acceptance_rate() -> None:
    drafts = "meta_info.spec_accepted_drafts/spec_proposed_drafts"
    a = ok(0, [1, 2, 3], tokens=[3, 3, 2], verify_steps=3, draft_tokens=12, accepted_tokens=5, draft_source=drafts)
    b = ok(0, [1, 2], tokens=[4, 4], verify_steps=2, draft_tokens=8, accepted_tokens=6, draft_source=drafts)
    lv = level([a, b], 0, 10)
    spec = lv.speculative
    assert spec is not None and spec.accept_length is not None and spec.acceptance_rate is not None
    assert spec.accept_length.value == 16 / 5  # (8 + 8) tokens / (3 + 2) verify steps
    assert spec.acceptance_rate.value == 11 / 20
    assert (spec.verify_steps, spec.draft_tokens, spec.accepted_tokens) == (5, 20, 11)
    assert spec.method is not None and "spec_verify_ct" in spec.method and drafts in spec.method
    assert spec.acceptance_rate.source == f"{drafts} per request" and spec.accept_length.source is not None
    assert (spec.output_tokens, spec.requests, spec.missing) == (16, 2, [])
    assert level([ok(0, [1], tokens=[1])], 0, 10).speculative is None


def test_empty_level_is_valid() -> None:
    lv = summarize_level(LevelRun(8, [], [], 0, 0, "aborted before start"))
    assert lv.concurrency == 8 and lv.requests_sent == 0 and lv.duration_s is None and lv.errors is None
    Level.model_validate(lv.model_dump())  # round-trips through the schema
