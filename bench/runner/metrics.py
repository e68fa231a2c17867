"""From one level's raw results to a record :class:`~bench.record.model.Level` (pure: no I/O, no clock).

The formulas follow ``shared/MEASUREMENT.md``; every Metric carries the name of the formula that produced it
(the ``FORMULA_*`` constants). Latency figures are over the completed (``ok``) requests only; the error rate is
failed / sent. A figure that needs token counts the server did not give is left out, never estimated from
``max_tokens`` or from the number of chunks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bench.record.model import Level, LevelErrors, LevelSpeculative, Metric, PrefixCache, Samples, TokenCounts
from bench.redact import redact_text

from ._stats import describe
from .load_generator import LevelRun
from .request import RequestResult

__all__ = [
    "FORMULA_ACCEPTANCE_RATE",
    "FORMULA_ACCEPT_LENGTH",
    "FORMULA_CACHE_HIT_SHARE",
    "FORMULA_E2E",
    "FORMULA_ITL_ONE_PER_CHUNK",
    "FORMULA_ITL_SPREAD",
    "FORMULA_ITL_UNKNOWN_CHUNKING",
    "FORMULA_OUTPUT_THROUGHPUT",
    "FORMULA_PER_REQUEST_TOK_S",
    "FORMULA_PER_REQUEST_TOK_S_E2E",
    "FORMULA_REQUEST_THROUGHPUT",
    "FORMULA_TOTAL_THROUGHPUT",
    "FORMULA_TPOT",
    "FORMULA_TTFT",
    "itl_samples_ms",
    "level_failure",
    "summarize_level",
]

FORMULA_TTFT = "ttft_to_first_text_chunk"
FORMULA_E2E = "e2e_to_last_token_chunk"
FORMULA_TPOT = "tpot_(e2e-ttft)/(output_tokens-1)"
FORMULA_ITL_SPREAD = "itl_per_token_chunk_gap_spread_over_chunk_tokens"
FORMULA_ITL_ONE_PER_CHUNK = "itl_per_token_one_token_per_chunk"
FORMULA_ITL_UNKNOWN_CHUNKING = "itl_spread_unknown_chunking"
FORMULA_PER_REQUEST_TOK_S = "per_request_output_tokens/(e2e-ttft)"
FORMULA_PER_REQUEST_TOK_S_E2E = "per_request_output_tokens/e2e"
FORMULA_OUTPUT_THROUGHPUT = "sum_output_tokens/level_window"
FORMULA_TOTAL_THROUGHPUT = "(sum_input_tokens+sum_output_tokens)/level_window"
FORMULA_REQUEST_THROUGHPUT = "completed_requests/level_window"
FORMULA_ACCEPT_LENGTH = "sum_output_tokens/sum_verify_steps"
FORMULA_ACCEPTANCE_RATE = "sum_accepted_draft_tokens/sum_draft_tokens"
FORMULA_CACHE_HIT_SHARE = "sum_cached_prompt_tokens/sum_prompt_tokens"

_EXAMPLES = 5
_EXAMPLE_CHARS = 200
_NS_PER_MS = 1e6


def _ms(ns: int) -> float:
    return ns / _NS_PER_MS


def itl_samples_ms(result: RequestResult) -> tuple[list[float], str | None]:
    """Per-token inter-token latencies of one request and the formula used (None: no figure possible).

    Gaps are between consecutive token-bearing chunks; the first chunk's gap is TTFT, not an ITL. With per-chunk
    token counts, a chunk's gap is spread evenly over its tokens (a chunk counted with zero tokens passes its gap
    on to the next chunk). Without them: one token per chunk when the chunks equal the output tokens, else each
    gap is divided by the mean tokens per chunk ``(n - 1) / (chunks - 1)`` (one sample per gap).
    """
    times = result.chunk_times_ns
    if len(times) < 2:
        return [], None
    gaps = [times[i] - times[i - 1] for i in range(1, len(times))]
    tokens = result.chunk_tokens
    if tokens is not None and len(tokens) == len(times):
        out: list[float] = []
        carried = 0
        for gap, count in zip(gaps, tokens[1:], strict=True):
            carried += gap
            if count > 0:
                out.extend([_ms(carried) / count] * count)
                carried = 0
        return out, FORMULA_ITL_SPREAD
    n = result.output_tokens
    if n is None or n < 2:
        return [], None
    if n == len(times):
        return [_ms(g) for g in gaps], FORMULA_ITL_ONE_PER_CHUNK
    per_chunk = (n - 1) / (len(times) - 1)
    return [_ms(g) / per_chunk for g in gaps], FORMULA_ITL_UNKNOWN_CHUNKING


def _metric(values: Sequence[float], unit: str, formula: str, note: str | None = None) -> Metric | None:
    d = describe(values)
    if d is None:
        return None
    return Metric(
        unit=unit,
        formula=formula,
        mean=round(d.mean, 4),
        p50=round(d.p50, 4),
        p90=round(d.p90, 4),
        p99=round(d.p99, 4),
        min=round(d.min, 4),
        max=round(d.max, 4),
        stdev=None if d.stdev is None else round(d.stdev, 4),
        n=d.n,
        note=note,
    )


def _rate(value: float, seconds: float | None, unit: str, formula: str, n: int, note: str) -> Metric | None:
    if seconds is None or seconds <= 0:
        return None
    return Metric(unit=unit, formula=formula, value=round(value / seconds, 4), n=n, note=note)


def _token_counts(values: list[int | None], sources: list[str]) -> TokenCounts:
    known = [v for v in values if v is not None]
    total = sum(known) if values and len(known) == len(values) else None
    kinds = set(sources)
    source = sources[0] if len(kinds) == 1 and total is not None else "unknown"
    return TokenCounts(total=total, source=source)


def _errors(results: Sequence[RequestResult], threshold: float) -> LevelErrors | None:
    if not results:
        return None
    failed = [r for r in results if not r.ok]
    by_kind = Counter(r.error_kind or "unknown" for r in failed)
    examples: list[str] = []
    for r in failed:
        text = redact_text(f"{r.error_kind}: {r.error or 'no message'}")  # a server may echo a key in its error
        text = text if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 1] + "…"
        if text not in examples:
            examples.append(text)
        if len(examples) >= _EXAMPLES:
            break
    rate = len(failed) / len(results)
    return LevelErrors(by_kind=dict(by_kind), examples=examples, error_rate=round(rate, 6), flagged=rate > threshold)


def _pct(value: float) -> str:
    text = f"{100 * value:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def level_failure(errors: LevelErrors | None, sent: int, threshold: float) -> str | None:
    """Why a level is not valid, in words, or None: its error rate (failed / sent) is above ``threshold``."""
    if errors is None or errors.error_rate is None or errors.error_rate <= threshold:
        return None
    failed = sum(errors.by_kind.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(errors.by_kind.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"error rate {_pct(errors.error_rate)} ({failed} of {sent} requests failed: {kinds}) "
        f"above the error threshold {_pct(threshold)}"
    )


def _prefix_cache(done: Sequence[RequestResult]) -> PrefixCache | None:
    """Cached prompt tokens over the requests that report both counts (a count above the prompt is left out)."""
    rows = [
        r
        for r in done
        if r.cached_tokens is not None and r.input_tokens is not None and 0 <= r.cached_tokens <= r.input_tokens
    ]
    inputs = sum(r.input_tokens or 0 for r in rows)
    if not rows or inputs <= 0:
        return None
    cached = sum(r.cached_tokens or 0 for r in rows)
    sources = sorted({r.cached_source or "unknown" for r in rows})
    return PrefixCache(
        cached_tokens=cached,
        input_tokens=inputs,
        hit_share=round(cached / inputs, 6),
        requests=len(rows),
        source=f"{' + '.join(sources)} per request ({FORMULA_CACHE_HIT_SHARE})",
    )


_NO_VERIFY = "accept_length: no response of this level carried a verify-step count (Σ output tokens ÷ Σ verify steps)"
_NO_DRAFTS = (
    "acceptance_rate: no response of this level carried proposed and accepted draft-token counts "
    "(Σ accepted ÷ Σ proposed)"
)


def _cross_check(verified: Sequence[RequestResult]) -> str | None:
    """Where the server's own per-request accept length disagrees with completion_tokens / spec_verify_ct."""
    off = [
        r
        for r in verified
        if r.server_accept_length is not None
        and r.verify_steps
        and abs((r.output_tokens or 0) / r.verify_steps - r.server_accept_length) > 1e-6 * r.server_accept_length
    ]
    if not off:
        return None
    return f"{len(off)} request(s) report a spec_accept_length that differs from completion_tokens / spec_verify_ct"


def _ratio(
    pairs: Sequence[tuple[int, int]], *, unit: str, formula: str, digits: int, source: str, note: str | None = None
) -> tuple[int, int, Metric | None]:
    """Σ numerators, Σ denominators over the requests, and their ratio as a Metric (None when Σ denominators is 0):
    a level's figure is the ratio of its sums, never a mean of per-request ratios."""
    num, den = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if den <= 0:
        return num, den, None
    return (
        num,
        den,
        Metric(unit=unit, formula=formula, value=round(num / den, digits), n=len(pairs), source=source, note=note),
    )


def _speculative(done: Sequence[RequestResult], expected: str | None = None) -> LevelSpeculative | None:
    """Both figures where the responses carry their inputs, each from its own inputs; ``missing`` names the one
    that cannot be computed and why. ``expected``: how the run's speculative figures should be read (the engine
    adapter's words), given when the run is known to be speculative: a level without any input then still says
    that both figures are missing."""
    verified = [r for r in done if r.verify_steps is not None and r.output_tokens is not None]
    drafted = [r for r in done if r.draft_tokens is not None and r.accepted_tokens is not None]
    if not verified and not drafted:
        if expected is None:
            return None
        return LevelSpeculative(method=expected, missing=[_NO_VERIFY, _NO_DRAFTS], requests=0)
    methods: list[str] = []
    missing: list[str] = []
    accept_length = acceptance_rate = None
    verify_steps = draft = accepted = out = None
    if verified:
        source = "meta_info.spec_verify_ct and meta_info.completion_tokens per request"
        methods.append(source)
        out, verify_steps, accept_length = _ratio(
            [(r.output_tokens or 0, r.verify_steps or 0) for r in verified],
            unit="tokens/step",
            formula=FORMULA_ACCEPT_LENGTH,
            digits=4,
            source=source,
            note=_cross_check(verified),
        )
        if accept_length is None:
            missing.append("accept_length: the verify steps of this level sum to 0")
    else:
        missing.append(_NO_VERIFY)
    if drafted:
        source = f"{' + '.join(sorted({r.draft_source or 'unknown' for r in drafted}))} per request"
        methods.append(source)
        accepted, draft, acceptance_rate = _ratio(
            [(r.accepted_tokens or 0, r.draft_tokens or 0) for r in drafted],
            unit="ratio",
            formula=FORMULA_ACCEPTANCE_RATE,
            digits=6,
            source=source,
        )
        if acceptance_rate is None:
            missing.append("acceptance_rate: no draft token was proposed at this level")
    else:
        missing.append(_NO_DRAFTS)
    if out is None:
        out = sum(r.output_tokens or 0 for r in drafted) if all(r.output_tokens is not None for r in drafted) else None
    return LevelSpeculative(
        accept_length=accept_length,
        acceptance_rate=acceptance_rate,
        draft_tokens=draft,
        accepted_tokens=accepted,
        verify_steps=verify_steps,
        output_tokens=out,
        requests=len({id(r) for r in (*verified, *drafted)}),
        method="; ".join(methods),
        missing=missing,
    )


def summarize_level(
    run: LevelRun, *, error_threshold: float = 0.05, keep_samples: bool = True, speculative_method: str | None = None
) -> Level:
    """The record's figures for one level. ``speculative_method``: given when the run is known to be speculative
    (the engine adapter's words for how its figures are read), so that a level whose responses carry no
    speculative counts says which figures are missing instead of saying nothing."""
    results = run.results
    done = [r for r in results if r.ok and r.t_first_ns is not None and r.t_last_ns is not None]
    ttft: list[float] = []
    e2e: list[float] = []
    tpot: list[float] = []
    itl: list[float] = []
    itl_formulas: set[str] = set()
    tok_s: list[float] = []
    tok_s_e2e: list[float] = []
    for r in done:
        assert r.t_first_ns is not None and r.t_last_ns is not None
        first = r.t_first_ns - r.t_sent_ns
        last = r.t_last_ns - r.t_sent_ns
        ttft.append(_ms(first))
        e2e.append(_ms(last))
        n = r.output_tokens
        if n is not None:
            if n >= 2:
                tpot.append(_ms(last - first) / (n - 1))
            if last > first:
                tok_s.append(n / ((last - first) / 1e9))
            if last > 0:
                tok_s_e2e.append(n / (last / 1e9))
        samples, formula = itl_samples_ms(r)
        if formula is not None:
            itl.extend(samples)
            itl_formulas.add(formula)

    seconds = run.window_ns / 1e9 if results and run.window_ns > 0 else None
    outputs = [r.output_tokens for r in done]
    inputs = [r.input_tokens for r in done]
    cached = [r.cached_tokens for r in done]
    output_counts = _token_counts(outputs, [r.token_source for r in done])
    input_counts = _token_counts(inputs, [r.input_token_source for r in done])
    window_note = f"over the level window, {len(done)} completed requests"
    output_throughput = total_throughput = None
    if output_counts.total is not None:
        output_throughput = _rate(
            output_counts.total, seconds, "tok/s", FORMULA_OUTPUT_THROUGHPUT, len(done), window_note
        )
        if input_counts.total is not None:
            total_throughput = _rate(
                output_counts.total + input_counts.total,
                seconds,
                "tok/s",
                FORMULA_TOTAL_THROUGHPUT,
                len(done),
                window_note,
            )
    finish = Counter(r.finish_reason or "unknown" for r in done)
    errors = _errors(results, error_threshold)
    itl_note = None
    if len(itl_formulas) > 1:
        itl_note = "requests of this level needed different ITL formulas"
    return Level(
        concurrency=run.concurrency,
        requests_sent=len(results),
        requests_completed=len(done),
        requests_failed=len(results) - len(done),
        warmup_requests=len(run.warmup_results),
        duration_s=round(seconds, 6) if seconds is not None else None,
        output_throughput=output_throughput,
        total_throughput=total_throughput,
        request_throughput=_rate(len(done), seconds, "req/s", FORMULA_REQUEST_THROUGHPUT, len(done), window_note)
        if done
        else None,
        per_request_tok_s=_metric(tok_s, "tok/s", FORMULA_PER_REQUEST_TOK_S),
        per_request_tok_s_e2e=_metric(tok_s_e2e, "tok/s", FORMULA_PER_REQUEST_TOK_S_E2E),
        ttft_ms=_metric(ttft, "ms", FORMULA_TTFT),
        tpot_ms=_metric(tpot, "ms", FORMULA_TPOT),
        itl_ms=_metric(itl, "ms", "+".join(sorted(itl_formulas)) or FORMULA_ITL_SPREAD, itl_note),
        e2e_ms=_metric(e2e, "ms", FORMULA_E2E),
        output_tokens=output_counts if done else None,
        input_tokens=input_counts if done else None,
        finish_reasons=dict(finish),
        speculative=_speculative(done, speculative_method),
        prefix_cache=_prefix_cache(done),
        errors=errors,
        failure=level_failure(errors, len(results), error_threshold),
        samples=Samples(
            ttft_ms=[round(v, 4) for v in ttft],
            e2e_ms=[round(v, 4) for v in e2e],
            output_tokens=outputs,
            input_tokens=inputs,
            cached_tokens=cached if any(c is not None for c in cached) else [],
        )
        if keep_samples and done
        else None,
    )
