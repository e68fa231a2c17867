"""SGLang ``python -m sglang.bench_serving`` (``sglang.benchmark.serving``) ``--output-file`` JSONL.

One JSON object per line, one line per run, appended by ``benchmark()``: the arguments (``backend``,
``dataset_name``, ``request_rate``, ``max_concurrency``, ``random_*``), the results of ``calculate_metrics``
(``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``, ``*_throughput``,
``mean/median/std/p99_{ttft,tpot,itl,e2e_latency}_ms``, ``p95_itl_ms``, ``concurrency``), ``accept_length``
(read from ``/get_server_info``'s ``avg_spec_accept_length``: the server's LIFETIME average, not this run's),
newer versions a ``server_info`` dict, and with ``--output-details`` per-request arrays
(``input_lens``, ``output_lens``, ``ttfts``, ``itls``, ``generated_texts``, ``errors``).
Source read: sgl-project/sglang ``python/sglang/bench_serving.py`` (``calculate_metrics``, ``benchmark``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.record import Level, RecordError
from bench.record.model import LevelSpeculative, TokenCounts

from ._flat import flat_latency, level_errors, request_errors
from ._runs import Run, dist
from ._source import Count, Number, Rate, Source, parse_json_lines, read_text, stated_figures, validate

__all__ = ["parse"]

TOOL = "sglang bench_serving"
_F = "sglang bench_serving calculate_metrics"

# Result figures and per-request arrays: everything else on a line is configuration.
_RESULTS = {
    "duration", "completed", "total_input_tokens", "total_output_tokens", "total_output_tokens_retokenized",
    "request_throughput", "input_throughput", "output_throughput", "output_throughput_retokenized",
    "total_throughput", "total_throughput_retokenized", "concurrency", "accept_length", "server_info",
    "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "max_concurrency",
}  # fmt: skip
_LAT = ("ttft", "tpot", "itl", "e2e_latency")
_ENGINE_OF_BACKEND = {"sglang": "sglang", "sglang-native": "sglang", "sglang-oai": "sglang",
                      "sglang-oai-chat": "sglang", "vllm": "vllm", "vllm-chat": "vllm", "lmdeploy": "lmdeploy",
                      "lmdeploy-chat": "lmdeploy", "trt": "tensorrt-llm"}  # fmt: skip
# What the figures without a Level field are kept as (in the provenance notes).
_UNMAPPED = ("input_throughput", "total_output_tokens_retokenized", "output_throughput_retokenized",
             "total_throughput_retokenized", "concurrency")  # fmt: skip


class _ServerInfo(Source):
    version: str | None = None
    model_path: str | None = None


class _Line(Source):
    """One line of the output file: a run's arguments and results (the fields read here)."""

    completed: Count
    duration: Number
    max_concurrency: Count | None = None
    request_rate: Rate | None = None
    accept_length: Number | None = None
    output_throughput: Number | None = None
    total_throughput: Number | None = None
    request_throughput: Number | None = None
    total_output_tokens: Count | None = None
    total_input_tokens: Count | None = None
    errors: list[str | None] | None = None
    backend: str | None = None
    dataset_name: str | None = None
    model_id: str | None = None
    server_info: _ServerInfo | None = None


def _is_result_key(key: str) -> bool:
    return key in _RESULTS or any(key.endswith(f"_{stem}_ms") for stem in _LAT)


def _level(src: _Line, figures: dict[str, float], cited: str) -> tuple[Level, list[str]]:
    completed = src.completed
    errors = request_errors(src.errors)
    failed = sum(1 for e in errors if e) if errors is not None else None
    notes: list[str] = []
    conc = src.max_concurrency
    label = None if conc else f"request rate {src.request_rate if src.request_rate is not None else 'not stated'}"
    spec = None
    if src.accept_length is not None:
        spec = LevelSpeculative(
            accept_length=dist(
                "tokens/step",
                "sglang /get_server_info internal_states[0].avg_spec_accept_length",
                value=src.accept_length,
                note="the server's lifetime average (updated every 40 decode steps, reset by flush_cache), "
                "read after the run: NOT this level's own accept length",
                source=f"sglang bench_serving field accept_length ({cited})",
            ),
            method="sglang /get_server_info avg_spec_accept_length (lifetime average)",
            missing=[
                "acceptance_rate: sglang bench_serving reports no accepted or proposed draft-token counts, and an "
                "accept length is never converted into one"
            ],
        )
    level = Level(
        concurrency=conc if conc else None,
        label=label,
        requests_sent=len(errors) if errors is not None else None,
        requests_completed=completed,
        requests_failed=failed,
        duration_s=src.duration,
        output_throughput=dist("tok/s", f"{_F}: sum(output_len) / duration", value=src.output_throughput),
        total_throughput=dist(
            "tok/s", f"{_F}: (total_input + sum(output_len)) / duration", value=src.total_throughput
        ),
        request_throughput=dist("req/s", f"{_F}: completed / duration", value=src.request_throughput),
        ttft_ms=flat_latency(figures, "ttft", formula=f"{_F}: ttft (first non-empty chunk)", n=completed),
        tpot_ms=flat_latency(
            figures, "tpot", formula=f"{_F}: (latency - ttft) / (output_len - 1)", n=None,
            note="requests with output_len <= 1 are left out; their count is not stated",
        ),
        itl_ms=flat_latency(
            figures, "itl", formula=f"{_F}: per-chunk gaps (not spread over the tokens a chunk carries)", n=None,
            note="rests on every inter-chunk gap; the number of gaps is not stated",
        ),
        e2e_ms=flat_latency(
            figures, "e2e_latency", formula=f"{_F}: latency (request sent to last chunk)", n=completed
        ),
        output_tokens=TokenCounts(total=src.total_output_tokens, source="unknown"),
        input_tokens=TokenCounts(total=src.total_input_tokens, source="tokenizer"),
        speculative=spec,
        errors=level_errors(failed, len(errors) if errors is not None else None, errors),
    )  # fmt: skip
    if src.output_throughput is not None:
        notes.append(
            "Output token counts are the server's usage figures, but sglang bench_serving falls back to the "
            "requested output length when usage is missing; which requests did is not recorded."
        )
    return level, notes


def parse(path: Path) -> list[Run]:
    runs: list[Run] = []
    for lineno, obj in parse_json_lines(read_text(path), path, infinite_ok=frozenset({"request_rate"})):
        where = f"line {lineno}: "
        src = validate(_Line, obj, path, where)
        level, notes = _level(src, stated_figures(src, "_ms", path, where), f"{path.name} line {lineno}")
        info = src.server_info
        unmapped = {k: obj[k] for k in _UNMAPPED if obj.get(k) is not None}
        if unmapped:
            notes.append(f"{path.name} line {lineno}: figures without a schema field: {json.dumps(unmapped)}.")
        config: dict[str, Any] = {k: v for k, v in obj.items() if not _is_result_key(k)}
        if info is not None:
            config["server_info"] = {k: v for k, v in obj["server_info"].items() if k != "internal_states"}
        backend = src.backend
        described = {k: obj[k] for k in ("random_input_len", "random_output_len", "random_range_ratio",
                                          "sharegpt_output_len") if obj.get(k) is not None}  # fmt: skip
        runs.append(
            Run(
                source=path,
                locator=f"line {lineno}",
                tool=TOOL,
                tool_version=None,
                config=config,
                level=level,
                engine=_ENGINE_OF_BACKEND.get(backend or "", "unknown"),
                engine_version=info.version if info is not None else None,
                model=(info.model_path if info is not None else None) or src.model_id,
                prompt_set=f"sglang dataset {src.dataset_name}" if src.dataset_name else None,
                prompt_set_description=f"sglang bench_serving dataset arguments: {json.dumps(described)}"
                if described
                else None,
                api={"sglang": "generate", "sglang-native": "generate"}.get(backend or "")
                or ("chat" if backend and backend.endswith("chat") else ("completions" if backend else None)),
                server_info=obj["server_info"] if info is not None else None,
                notes=notes,
            )
        )
    if not runs:
        raise RecordError(path, "", "at least one JSON line with a run's results; the file is empty")
    return runs
