"""vLLM ``vllm bench serve --save-result`` JSON.

One JSON object per file (``--append-result`` appends more, one per line): the set-up (``date``,
``backend``/``endpoint_type``, ``label``, ``model_id``, ``tokenizer_id``, ``num_prompts``, ``request_rate``,
``burstiness``, ``max_concurrency``, ``--metadata`` keys) merged with ``benchmark()``'s result
(``duration``, ``completed``, ``failed``, ``total_input_tokens``, ``total_output_tokens``,
``request_throughput``, ``request_goodput``, ``output_throughput``, ``total_token_throughput``,
``max_output_tokens_per_s``, ``max_concurrent_requests``, ``mean/median/std_<m>_ms`` and ``p<N>_<m>_ms``
for m in ttft, tpot, itl, e2el, ``spec_decode_*`` from Prometheus counters diffed over the run, and the
per-request arrays ``input_lens``, ``output_lens``, ``ttfts``, ``itls``, ``latencies``, ``errors``
(with ``--save-detailed``; ``latencies`` always).
Source read: vllm-project/vllm ``vllm/benchmarks/serve.py`` (``benchmark``, ``main_async``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from bench.record import Level, RecordError
from bench.record.model import LevelSpeculative, Samples, TokenCounts

from ._flat import flat_latency, level_errors, request_errors
from ._runs import Run, dist
from ._source import Count, Number, Rate, Source, parse_json, parse_json_lines, read_text, stated_figures, validate

__all__ = ["parse"]

TOOL = "vllm bench serve"
_F = "vllm bench serve calculate_metrics"
_LAT = ("ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue")
_ARRAYS = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
           "generated_texts", "errors", "rps_change_events", "spec_decode_per_position_acceptance_rates")  # fmt: skip
_RESULTS = {"duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
            "request_goodput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
            "max_concurrent_requests", "rtfx", "date", "max_concurrency", *_ARRAYS}  # fmt: skip
_UNMAPPED = ("request_goodput", "max_output_tokens_per_s", "max_concurrent_requests", "burstiness")
_ENGINE_OF_BACKEND = {"vllm": "vllm", "vllm-chat": "vllm", "sglang": "sglang", "lmdeploy": "lmdeploy",
                      "tgi": "tgi", "tensorrt-llm": "tensorrt-llm"}  # fmt: skip


def _percentage(value: float) -> float:
    if not 0 <= value <= 100:
        raise ValueError("a percentage from 0 to 100 (vLLM: accepted / draft tokens x 100)")
    return value


class _Result(Source):
    """A ``--save-result`` document: the set-up and the results (the fields read here)."""

    completed: Count
    duration: Number
    failed: Count | None = None
    errors: list[str | None] | None = None
    max_concurrency: Count | None = None
    request_rate: Rate | None = None
    output_throughput: Number | None = None
    total_token_throughput: Number | None = None
    request_throughput: Number | None = None
    total_output_tokens: Count | None = None
    total_input_tokens: Count | None = None
    ttfts: list[Number] | None = None
    latencies: list[Number] | None = None
    output_lens: list[Count] | None = None
    input_lens: list[Count] | None = None
    spec_decode_acceptance_length: Number | None = None
    spec_decode_acceptance_rate: Annotated[Number, AfterValidator(_percentage)] | None = None
    spec_decode_draft_tokens: Count | None = None
    spec_decode_accepted_tokens: Count | None = None
    spec_decode_num_drafts: Count | None = None
    date: str | None = None
    backend: str | None = None
    endpoint_type: str | None = None
    model_id: str | None = None
    num_prompts: Count | None = None


def _is_result_key(key: str) -> bool:
    return (
        key in _RESULTS
        or key.startswith(("spec_decode_", "diffusion_", "probe_"))
        or any(key.endswith(f"_{m}_ms") for m in _LAT)
    )


def _samples(src: _Result, errors: list[str] | None, path: Path, where: str) -> Samples | None:
    ttfts, lats, outs, ins = src.ttfts, src.latencies, src.output_lens, src.input_lens
    if ttfts is None or lats is None or outs is None or errors is None:
        return None
    n = len(errors)
    for key, arr in (("ttfts", ttfts), ("latencies", lats), ("output_lens", outs)):
        if len(arr) != n:
            raise RecordError(path, f"{where}{key}", f"one entry per request ({n}, as in errors), got {len(arr)}")
    ok = [i for i in range(n) if not errors[i]]
    return Samples(
        ttft_ms=[ttfts[i] * 1000 for i in ok],
        e2e_ms=[lats[i] * 1000 for i in ok],
        output_tokens=[outs[i] for i in ok],
        input_tokens=[ins[i] for i in ok] if ins is not None and len(ins) == n else [],
    )


def _speculative(src: _Result, cited: str) -> LevelSpeculative | None:
    """vLLM diffs its Prometheus spec_decode counters over the run (``benchmark()`` in serve.py):
    ``spec_decode_acceptance_rate`` = accepted / draft tokens x 100 (a PERCENTAGE), ``spec_decode_acceptance_length``
    = 1 + accepted tokens / drafts. The rate becomes a 0..1 fraction, like every acceptance rate in a record."""
    length, pct = src.spec_decode_acceptance_length, src.spec_decode_acceptance_rate
    if length is None and pct is None:
        return None
    return LevelSpeculative(
        accept_length=dist(
            "tokens/step",
            "vllm: 1 + accepted tokens / drafts (Prometheus counters diffed over the run)",
            value=length,
            source=f"vllm bench serve field spec_decode_acceptance_length ({cited})",
        ),
        acceptance_rate=dist(
            "ratio",
            "accepted draft tokens / proposed draft tokens = vllm spec_decode_acceptance_rate / 100",
            value=round(pct / 100, 6) if pct is not None else None,
            source=f"vllm bench serve field spec_decode_acceptance_rate, a percentage ({cited})",
        ),
        draft_tokens=src.spec_decode_draft_tokens,
        accepted_tokens=src.spec_decode_accepted_tokens,
        verify_steps=src.spec_decode_num_drafts,
        method="vllm /metrics spec_decode counters, before and after the run",
    )


def _run(obj: Any, path: Path, where: str, locator: str) -> Run:
    src = validate(_Result, obj, path, where)
    figures = stated_figures(src, "_ms", path, where)
    completed = src.completed
    errors = request_errors(src.errors)
    failed = src.failed
    sent = completed + failed if failed is not None else (len(errors) if errors is not None else None)
    conc = src.max_concurrency
    rate = src.request_rate
    level = Level(
        concurrency=conc,
        label=None if conc else f"request rate {rate if rate is not None else 'not stated'}",
        requests_sent=sent,
        requests_completed=completed,
        requests_failed=failed,
        duration_s=src.duration,
        output_throughput=dist("tok/s", f"{_F}: sum(output_lens) / duration", value=src.output_throughput),
        total_throughput=dist(
            "tok/s", f"{_F}: (total_input + total_output) / duration", value=src.total_token_throughput
        ),
        request_throughput=dist("req/s", f"{_F}: completed / duration", value=src.request_throughput),
        ttft_ms=flat_latency(figures, "ttft", formula=f"{_F}: ttft", n=completed,
                             note="vllm counts the first chunk, a role-only chunk included"),
        tpot_ms=flat_latency(figures, "tpot", formula=f"{_F}: (latency - ttft) / (output_len - 1)", n=None,
                             note="requests with one output token are left out; their count is not stated"),
        itl_ms=flat_latency(figures, "itl", formula=f"{_F}: per-chunk gaps", n=None,
                            note="rests on every inter-chunk gap; the number of gaps is not stated"),
        e2e_ms=flat_latency(figures, "e2el", formula=f"{_F}: latency (request sent to last chunk)", n=completed),
        output_tokens=TokenCounts(total=src.total_output_tokens, source="unknown"),
        input_tokens=TokenCounts(total=src.total_input_tokens, source="tokenizer"),
        speculative=_speculative(src, f"{path.name} {locator}" if where else path.name),
        errors=level_errors(failed, sent, errors),
        samples=_samples(src, errors, path, where),
    )  # fmt: skip
    notes: list[str] = []
    if src.date:
        notes.append(f"{path.name} {locator}: the tool states date {src.date} (client local time; zone not stated).")
    unmapped = {k: obj[k] for k in _UNMAPPED if obj.get(k) is not None}
    if unmapped:
        notes.append(f"{path.name} {locator}: figures without a schema field: {json.dumps(unmapped)}.")
    backend = src.backend or src.endpoint_type
    return Run(
        source=path,
        locator=locator,
        tool=TOOL,
        tool_version=None,
        config={k: v for k, v in obj.items() if not _is_result_key(k)},
        level=level,
        engine=_ENGINE_OF_BACKEND.get(backend or "", "unknown"),
        model=src.model_id,
        num_prompts=src.num_prompts,
        api="chat" if backend and "chat" in backend else ("completions" if backend else None),
        notes=notes
        + ([] if backend in _ENGINE_OF_BACKEND else [f"The client backend '{backend}' does not name the engine."]),
    )


def parse(path: Path) -> list[Run]:
    rates = frozenset({"request_rate"})
    text = read_text(path)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1 and all(ln.lstrip().startswith("{") and ln.rstrip().endswith("}") for ln in lines):
        # --append-result: one JSON object per line
        return [
            _run(obj, path, f"line {n}: ", f"line {n}") for n, obj in parse_json_lines(text, path, infinite_ok=rates)
        ]
    return [_run(parse_json(text, path, infinite_ok=rates), path, "", "whole file")]
