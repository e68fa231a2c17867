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
from typing import Any

from bench.record import Level, RecordError
from bench.record.model import LevelErrors, LevelSpeculative, Samples, TokenCounts

from .base import Run, Src, dist, read_json, refuse_non_finite
from .flat import flat_latency, per_request_errors

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


def _is_result_key(key: str) -> bool:
    return (
        key in _RESULTS
        or key.startswith(("spec_decode_", "diffusion_", "probe_"))
        or any(key.endswith(f"_{m}_ms") for m in _LAT)
    )


def _samples(src: Src, errors: list[str] | None) -> Samples | None:
    ttfts, lats, outs = src.list_("ttfts"), src.list_("latencies"), src.list_("output_lens")
    ins = src.list_("input_lens")
    if ttfts is None or lats is None or outs is None or errors is None:
        return None
    n = len(errors)
    for key, arr in (("ttfts", ttfts), ("latencies", lats), ("output_lens", outs)):
        if len(arr) != n:
            raise src.err(key, f"one entry per request ({n}, as in errors), got {len(arr)}")
    ok = [i for i in range(n) if not errors[i]]
    try:
        return Samples(
            ttft_ms=[float(ttfts[i]) * 1000 for i in ok],
            e2e_ms=[float(lats[i]) * 1000 for i in ok],
            output_tokens=[int(outs[i]) for i in ok],
            input_tokens=[int(ins[i]) for i in ok] if ins is not None and len(ins) == n else [],
        )
    except (TypeError, ValueError):
        raise src.err("ttfts", "numeric per-request arrays (ttfts, latencies, output_lens)") from None


def _speculative(src: Src) -> LevelSpeculative | None:
    """vLLM diffs its Prometheus spec_decode counters over the run (``benchmark()`` in serve.py):
    ``spec_decode_acceptance_rate`` = accepted / draft tokens x 100 (a PERCENTAGE), ``spec_decode_acceptance_length``
    = 1 + accepted tokens / drafts. The rate becomes a 0..1 fraction, like every acceptance rate in a record."""
    length, pct = src.num("spec_decode_acceptance_length"), src.num("spec_decode_acceptance_rate")
    if length is None and pct is None:
        return None
    if pct is not None and not 0 <= pct <= 100:
        raise src.err("spec_decode_acceptance_rate", "a percentage from 0 to 100 (vLLM: accepted / draft tokens x 100)")
    where = f"{src.path.name} {src.where.rstrip(': ')}".rstrip()
    return LevelSpeculative(
        accept_length=dist(
            "tokens/step",
            "vllm: 1 + accepted tokens / drafts (Prometheus counters diffed over the run)",
            value=length,
            source=f"vllm bench serve field spec_decode_acceptance_length ({where})",
        ),
        acceptance_rate=dist(
            "ratio",
            "accepted draft tokens / proposed draft tokens = vllm spec_decode_acceptance_rate / 100",
            value=round(pct / 100, 6) if pct is not None else None,
            source=f"vllm bench serve field spec_decode_acceptance_rate, a percentage ({where})",
        ),
        draft_tokens=src.int_("spec_decode_draft_tokens"),
        accepted_tokens=src.int_("spec_decode_accepted_tokens"),
        verify_steps=src.int_("spec_decode_num_drafts"),
        method="vllm /metrics spec_decode counters, before and after the run",
    )


def _run(obj: Any, path: Path, where: str, locator: str) -> Run:
    refuse_non_finite(obj, path, where, infinite_ok=frozenset({"request_rate"}))
    src = Src(obj, path, where)
    completed = src.need_int("completed")
    src.num("duration", required=True)
    errors = per_request_errors(src)
    failed = src.int_("failed")
    sent = completed + failed if failed is not None else (len(errors) if errors is not None else None)
    conc = src.int_("max_concurrency")
    rate = src.obj.get("request_rate")
    spec = _speculative(src)
    err_obj = None
    if failed:
        examples = [e.strip().splitlines()[-1][:200] for e in (errors or []) if e.strip()]
        err_obj = LevelErrors(
            by_kind={"request error": failed},
            examples=list(dict.fromkeys(examples))[:3],
            error_rate=failed / sent if sent else None,
        )
    level = Level(
        concurrency=conc,
        label=None if conc else f"request rate {rate if rate is not None else 'not stated'}",
        requests_sent=sent,
        requests_completed=completed,
        requests_failed=failed,
        duration_s=src.num("duration"),
        output_throughput=dist("tok/s", f"{_F}: sum(output_lens) / duration", value=src.num("output_throughput")),
        total_throughput=dist(
            "tok/s", f"{_F}: (total_input + total_output) / duration", value=src.num("total_token_throughput")
        ),
        request_throughput=dist("req/s", f"{_F}: completed / duration", value=src.num("request_throughput")),
        ttft_ms=flat_latency(src, "ttft", formula=f"{_F}: ttft", n=completed,
                             note="vllm counts the first chunk, a role-only chunk included"),
        tpot_ms=flat_latency(src, "tpot", formula=f"{_F}: (latency - ttft) / (output_len - 1)", n=None,
                             note="requests with one output token are left out; their count is not stated"),
        itl_ms=flat_latency(src, "itl", formula=f"{_F}: per-chunk gaps", n=None,
                            note="rests on every inter-chunk gap; the number of gaps is not stated"),
        e2e_ms=flat_latency(src, "e2el", formula=f"{_F}: latency (request sent to last chunk)", n=completed),
        output_tokens=TokenCounts(total=src.int_("total_output_tokens"), source="unknown"),
        input_tokens=TokenCounts(total=src.int_("total_input_tokens"), source="tokenizer"),
        speculative=spec,
        errors=err_obj,
        samples=_samples(src, errors),
    )  # fmt: skip
    notes: list[str] = []
    date = src.str_("date")
    if date:
        notes.append(f"{path.name} {locator}: the tool states date {date} (client local time; zone not stated).")
    unmapped = {k: obj[k] for k in _UNMAPPED if obj.get(k) is not None}
    if unmapped:
        notes.append(f"{path.name} {locator}: figures without a schema field: {json.dumps(unmapped)}.")
    backend = src.str_("backend") or src.str_("endpoint_type")
    model = src.str_("model_id")
    return Run(
        source=path,
        locator=locator,
        tool=TOOL,
        tool_version=None,
        config={k: v for k, v in obj.items() if not _is_result_key(k)},
        level=level,
        engine=_ENGINE_OF_BACKEND.get(backend or "", "unknown"),
        model=model,
        num_prompts=src.int_("num_prompts"),
        api="chat" if backend and "chat" in backend else ("completions" if backend else None),
        notes=notes
        + ([] if backend in _ENGINE_OF_BACKEND else [f"The client backend '{backend}' does not name the engine."]),
    )


def parse(path: Path) -> list[Run]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(path, "", f"a readable UTF-8 file ({exc})") from None
    stripped = [ln for ln in text.splitlines() if ln.strip()]
    if len(stripped) > 1 and all(ln.lstrip().startswith("{") and ln.rstrip().endswith("}") for ln in stripped):
        # --append-result: one JSON object per line
        runs = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(path, f"line {lineno} column {exc.colno}", f"valid JSON ({exc.msg})") from None
            runs.append(_run(obj, path, f"line {lineno}: ", f"line {lineno}"))
        return runs
    return [_run(read_json(path), path, "", "whole file")]
