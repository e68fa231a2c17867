"""guidellm benchmark reports (``--output kind=json`` / ``yaml``; ``GenerativeBenchmarksReport``, metadata version 2).

``benchmarks[]`` each hold ``config.strategy`` (``type_`` concurrent with ``streams``, synchronous, throughput,
constant, poisson), ``config.backend`` (target, model, request_format), ``start_time``/``end_time``/``duration``,
``metrics`` whose entries are status distribution summaries (``successful``/``errored``/``incomplete``/``total``,
each with mean, median, std_dev, min, max, count, total_sum and ``percentiles`` p001..p999) — requests_per_second,
output_tokens_per_second, tokens_per_second, time_to_first_token_ms, time_per_output_token_ms,
inter_token_latency_ms, request_latency (SECONDS), prompt_token_count, output_token_count — plus
``metrics.request_totals`` and per-request stats in ``requests.successful``.
Sources: the guidellm 0.8.1 package (``guidellm/benchmark/schemas/report.py``, ``benchmark.py``, ``metrics.py``,
``guidellm/schemas/base/statistics.py``) and a real report it wrote (see tests/importers/fixtures/README.md).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from bench.record import Level, Metric, RecordError
from bench.record.model import LevelErrors, Samples, TokenCounts
from bench.redact import redact_value

from ._runs import Run, dist
from ._source import Count, Number, Source, parse_json, read_text, read_yaml, validate

__all__ = ["parse"]

TOOL = "guidellm"


class _Percentiles(Source):
    p90: Number | None = None
    p95: Number | None = None
    p99: Number | None = None
    p999: Number | None = None


class _Summary(Source):
    """A status distribution summary (guidellm ``StatusDistributionSummary.successful``)."""

    mean: Number | None = None
    median: Number | None = None
    std_dev: Number | None = None
    min: Number | None = None
    max: Number | None = None
    count: Count | None = None
    total_sum: Number | None = None
    percentiles: _Percentiles | None = None


class _TokenSummary(_Summary):
    total_sum: Count | None = None  # a token count (summed in floating point: 593.9999999999999 is 594)


class _TokensByStatus(Source):
    successful: _TokenSummary | None = None


class _ByStatus(Source):
    successful: _Summary | None = None


class _Totals(Source):
    successful: Count
    errored: Count | None = None
    total: Count | None = None


class _Metrics(Source):
    request_totals: _Totals
    requests_per_second: _ByStatus | None = None
    output_tokens_per_second: _ByStatus | None = None
    tokens_per_second: _ByStatus | None = None
    time_to_first_token_ms: _ByStatus | None = None
    time_per_output_token_ms: _ByStatus | None = None
    inter_token_latency_ms: _ByStatus | None = None
    request_latency: _ByStatus | None = None
    prompt_token_count: _TokensByStatus | None = None
    output_token_count: _TokensByStatus | None = None

    def successful(self, key: str) -> _Summary | None:
        by_status: _ByStatus | _TokensByStatus | None = getattr(self, key)
        return by_status.successful if by_status is not None else None

    def tokens(self, key: str) -> int | None:
        """The summed token count of the successful requests."""
        by_status: _TokensByStatus | None = getattr(self, key)
        summary = by_status.successful if by_status is not None else None
        return summary.total_sum if summary is not None else None


class _Strategy(Source):
    type_: str | None = None
    type: str | None = None
    streams: Count | None = None
    rate: Number | None = None


class _Backend(Source):
    model: str | None = None
    request_format: str | None = None


class _BenchmarkConfig(Source):
    strategy: _Strategy
    backend: _Backend | None = None
    requests: dict[str, Any] | None = None


class _RequestStats(Source):
    time_to_first_token_ms: Number | None = None
    request_latency: Number | None = None
    output_tokens: Count | None = None
    prompt_tokens: Count | None = None


class _Requests(Source):
    successful: list[_RequestStats] | None = None


class _Benchmark(Source):
    config: _BenchmarkConfig | None = None
    args: _BenchmarkConfig | None = None  # reports before guidellm 0.4 name it args
    metrics: _Metrics
    duration: Number | None = None
    start_time: Number | None = None
    requests: _Requests | None = None


class _Metadata(Source):
    guidellm_version: str | None = None


class _Report(Source):
    """A ``GenerativeBenchmarksReport`` (metadata version 2): the fields read here."""

    metadata: _Metadata | None = None
    benchmarks: list[_Benchmark] = Field(min_length=1)
    config: dict[str, Any] | None = None


def _dist(metrics: _Metrics, key: str, unit: str, n: int | None, *, scale: float = 1.0) -> Metric | None:
    s = metrics.successful(key)
    if s is None:
        return None
    pct = s.percentiles

    def sc(v: float | None) -> float | None:
        return v * scale if v is not None else None

    extra = []
    if pct is not None:
        for k, v in (("p95", pct.p95), ("p999", pct.p999)):
            if v is not None:
                extra.append(f"{k} = {v * scale:.6g} {unit}")
    notes = ["stdev is guidellm's std_dev"]
    if s.count is not None and s.count != n:
        notes.append(f"guidellm's own sample count is {s.count} (it weights this metric per token)")
    if scale != 1.0:
        notes.append(f"guidellm states {key} in seconds; multiplied by {scale:g}")
    if extra:
        notes.append("also stated: " + ", ".join(extra))
    return dist(
        unit,
        f"guidellm metrics.{key}.successful",
        n=n,
        note="; ".join(notes),
        mean=sc(s.mean),
        p50=sc(s.median),
        p90=sc(pct.p90) if pct is not None else None,
        p99=sc(pct.p99) if pct is not None else None,
        stdev=sc(s.std_dev),
        min=sc(s.min),
        max=sc(s.max),
    )


def _rate(metrics: _Metrics, key: str, unit: str, what: str) -> Metric | None:
    s = metrics.successful(key)
    if s is None:
        return None
    return dist(unit, f"guidellm metrics.{key}.successful.mean ({what} over the benchmark)", value=s.mean)


def _samples(bench: _Benchmark, completed: int) -> Samples | None:
    rows = bench.requests.successful if bench.requests is not None else None
    if not rows or len(rows) != completed:
        return None  # absent, or a sample of the requests (guidellm's sample_size): not every request
    ttft = [r.time_to_first_token_ms for r in rows]
    lat = [r.request_latency for r in rows]
    if any(v is None for v in ttft) or any(v is None for v in lat):
        return None
    return Samples(
        ttft_ms=[v for v in ttft if v is not None],
        e2e_ms=[v * 1000 for v in lat if v is not None],
        output_tokens=[r.output_tokens for r in rows],
        input_tokens=[r.prompt_tokens for r in rows],
    )


def _run(bench: _Benchmark, raw: dict[str, Any], version: str | None, path: Path, locator: str) -> Run:
    cfg = bench.config or bench.args
    if cfg is None:
        raise RecordError(path, f"{locator}.config", "a benchmark's config (guidellm report schema version 2)")
    raw_backend = (raw.get("config") or raw.get("args") or {}).get("backend") or {}
    strategy = cfg.strategy
    kind = strategy.type_ or strategy.type
    conc = strategy.streams if kind == "concurrent" else (1 if kind == "synchronous" else None)
    rate = strategy.rate
    label = None if conc else (f"{kind} rate {rate:g}" if rate is not None else f"{kind or 'unknown'} strategy")
    metrics = bench.metrics
    totals = metrics.request_totals
    completed, errored = totals.successful, totals.errored
    level = Level(
        concurrency=conc,
        label=label,
        requests_sent=totals.total,
        requests_completed=completed,
        requests_failed=errored,
        duration_s=bench.duration,
        output_throughput=_rate(metrics, "output_tokens_per_second", "tok/s", "output tokens per second"),
        total_throughput=_rate(metrics, "tokens_per_second", "tok/s", "prompt + output tokens per second"),
        request_throughput=_rate(metrics, "requests_per_second", "req/s", "successful requests per second"),
        ttft_ms=_dist(metrics, "time_to_first_token_ms", "ms", completed),
        tpot_ms=_dist(metrics, "time_per_output_token_ms", "ms", completed),
        itl_ms=_dist(metrics, "inter_token_latency_ms", "ms", completed),
        e2e_ms=_dist(metrics, "request_latency", "ms", completed, scale=1000.0),
        output_tokens=TokenCounts(total=metrics.tokens("output_token_count"), source="unknown"),
        input_tokens=TokenCounts(total=metrics.tokens("prompt_token_count"), source="unknown"),
        errors=LevelErrors(by_kind={"errored": errored}, error_rate=errored / (totals.total or 1)) if errored else None,
        samples=_samples(bench, completed),
    )
    backend = cfg.backend
    start = bench.start_time
    return Run(
        source=path,
        locator=locator,
        tool=TOOL,
        tool_version=version,
        config={
            "backend": redact_value("backend", raw_backend),  # its api_key, if any, through the one redactor
            "strategy_type": kind,
            "rate": rate,
            "requests": cfg.requests,
        },
        level=level,
        model=backend.model if backend else None,
        api="chat" if backend and "chat" in (backend.request_format or "") else None,
        measured_at=datetime.fromtimestamp(start, UTC).replace(microsecond=0) if start else None,
        notes=[
            "Throughputs are guidellm's own rate summaries (the mean of its per-second rate distribution); "
            "n of each latency figure is the successful request count."
        ],
    )


def parse(path: Path) -> list[Run]:
    doc = read_yaml(path) if path.suffix.lower() in (".yaml", ".yml") else parse_json(read_text(path), path)
    report = validate(_Report, doc, path)
    version = report.metadata.guidellm_version if report.metadata is not None else None
    raw = doc["benchmarks"]
    runs = [_run(b, raw[i], version, path, f"benchmarks[{i}]") for i, b in enumerate(report.benchmarks)]
    data = (report.config or {}).get("spec")
    if isinstance(data, dict) and data.get("data") is not None:
        desc = json.dumps(data["data"], default=str)[:400]
        for r in runs:
            r.prompt_set = f"guidellm data {desc[:80]}"
            r.prompt_set_description = f"guidellm data sources: {desc}"
    return runs
