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

import yaml

from bench.record import Level, Metric, RecordError
from bench.record.model import LevelErrors, Samples, TokenCounts

from .base import Run, Src, dist, read_json, refuse_non_finite

__all__ = ["parse"]

TOOL = "guidellm"


def _load(path: Path) -> Any:
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            return yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
            raise RecordError(path, where, f"valid YAML ({exc.problem})") from None
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise RecordError(path, "", f"a readable YAML file ({exc})") from None
    return read_json(path)


def _summary(metrics: Src, key: str) -> Src | None:
    m = metrics.sub(key)
    return m.sub("successful") if m is not None else None


def _dist(metrics: Src, key: str, unit: str, n: int | None, *, scale: float = 1.0) -> Metric | None:
    s = _summary(metrics, key)
    if s is None:
        return None
    pct = s.sub("percentiles")

    def sc(v: float | None) -> float | None:
        return v * scale if v is not None else None

    extra = []
    if pct is not None:
        for k in ("p95", "p999"):
            v = pct.num(k)
            if v is not None:
                extra.append(f"{k} = {v * scale:.6g} {unit}")
    notes = ["stdev is guidellm's std_dev"]
    count = s.int_("count")
    if count is not None and count != n:
        notes.append(f"guidellm's own sample count is {count} (it weights this metric per token)")
    if scale != 1.0:
        notes.append(f"guidellm states {key} in seconds; multiplied by {scale:g}")
    if extra:
        notes.append("also stated: " + ", ".join(extra))
    return dist(
        unit,
        f"guidellm metrics.{key}.successful",
        n=n,
        note="; ".join(notes),
        mean=sc(s.num("mean")),
        p50=sc(s.num("median")),
        p90=sc(pct.num("p90")) if pct is not None else None,
        p99=sc(pct.num("p99")) if pct is not None else None,
        stdev=sc(s.num("std_dev")),
        min=sc(s.num("min")),
        max=sc(s.num("max")),
    )


def _rate(metrics: Src, key: str, unit: str, what: str) -> Metric | None:
    s = _summary(metrics, key)
    if s is None:
        return None
    return dist(unit, f"guidellm metrics.{key}.successful.mean ({what} over the benchmark)", value=s.num("mean"))


def _samples(bench: Src, completed: int | None) -> Samples | None:
    reqs = bench.sub("requests")
    ok = reqs.list_("successful") if reqs is not None else None
    if not ok or completed is None or len(ok) != completed:
        return None  # absent, or a sample of the requests (guidellm's sample_size): not every request
    rows = [Src(r, bench.path, f"{bench.where}requests.successful[{i}].") for i, r in enumerate(ok)]
    ttft = [r.num("time_to_first_token_ms") for r in rows]
    lat = [r.num("request_latency") for r in rows]
    if any(v is None for v in ttft) or any(v is None for v in lat):
        return None
    return Samples(
        ttft_ms=[float(v) for v in ttft if v is not None],
        e2e_ms=[float(v) * 1000 for v in lat if v is not None],
        output_tokens=[r.int_("output_tokens") for r in rows],
        input_tokens=[r.int_("prompt_tokens") for r in rows],
    )


def _run(bench: Src, version: str | None, locator: str) -> Run:
    cfg = bench.sub("config") or bench.sub("args")
    if cfg is None:
        raise bench.err("config", "a benchmark's config (guidellm report schema version 2)")
    strategy = cfg.sub("strategy")
    if strategy is None:
        raise cfg.err("strategy", "the scheduling strategy of the benchmark")
    kind = strategy.str_("type_") or strategy.str_("type")
    streams = strategy.int_("streams")
    conc = streams if kind == "concurrent" else (1 if kind == "synchronous" else None)
    rate = strategy.num("rate")
    label = None if conc else (f"{kind} rate {rate:g}" if rate is not None else f"{kind or 'unknown'} strategy")
    metrics = bench.sub("metrics")
    if metrics is None:
        raise bench.err("metrics", "the benchmark's metrics")
    totals = metrics.sub("request_totals")
    if totals is None:
        raise metrics.err("request_totals", "successful/errored/incomplete/total request counts")
    completed = totals.int_("successful", required=True)
    errored = totals.int_("errored")
    prompt_tok = _summary(metrics, "prompt_token_count")
    out_tok = _summary(metrics, "output_token_count")
    level = Level(
        concurrency=conc,
        label=label,
        requests_sent=totals.int_("total"),
        requests_completed=completed,
        requests_failed=errored,
        duration_s=bench.num("duration"),
        output_throughput=_rate(metrics, "output_tokens_per_second", "tok/s", "output tokens per second"),
        total_throughput=_rate(metrics, "tokens_per_second", "tok/s", "prompt + output tokens per second"),
        request_throughput=_rate(metrics, "requests_per_second", "req/s", "successful requests per second"),
        ttft_ms=_dist(metrics, "time_to_first_token_ms", "ms", completed),
        tpot_ms=_dist(metrics, "time_per_output_token_ms", "ms", completed),
        itl_ms=_dist(metrics, "inter_token_latency_ms", "ms", completed),
        e2e_ms=_dist(metrics, "request_latency", "ms", completed, scale=1000.0),
        output_tokens=TokenCounts(total=out_tok.int_("total_sum") if out_tok else None, source="unknown"),
        input_tokens=TokenCounts(total=prompt_tok.int_("total_sum") if prompt_tok else None, source="unknown"),
        errors=LevelErrors(by_kind={"errored": errored}, error_rate=errored / (totals.int_("total") or 1))
        if errored
        else None,
        samples=_samples(bench, completed),
    )
    backend = cfg.sub("backend")
    start = bench.num("start_time")
    requests_cfg = cfg.sub("requests")
    return Run(
        source=bench.path,
        locator=locator,
        tool=TOOL,
        tool_version=version,
        config={
            "backend": {k: v for k, v in (backend.obj if backend else {}).items() if k != "api_key"},
            "strategy_type": kind,
            "rate": rate,
            "requests": requests_cfg.obj if requests_cfg else None,
        },
        level=level,
        model=backend.str_("model") if backend else None,
        api="chat" if backend and "chat" in (backend.str_("request_format") or "") else None,
        measured_at=datetime.fromtimestamp(start, UTC).replace(microsecond=0) if start else None,
        notes=[
            "Throughputs are guidellm's own rate summaries (the mean of its per-second rate distribution); "
            "n of each latency figure is the successful request count."
        ],
    )


def parse(path: Path) -> list[Run]:
    doc = _load(path)
    refuse_non_finite(doc, path)
    report = Src(doc, path)
    meta = report.sub("metadata")
    version = meta.str_("guidellm_version") if meta is not None else None
    benches = report.list_("benchmarks")
    if benches is None:
        raise report.err("benchmarks", "a guidellm report with a benchmarks list")
    if not benches:
        raise report.err("benchmarks", "at least one benchmark")
    runs = [_run(Src(b, path, f"benchmarks[{i}]."), version, f"benchmarks[{i}]") for i, b in enumerate(benches)]
    spec = report.sub("config")
    data = spec.sub("spec") if spec is not None else None
    if data is not None and data.obj.get("data") is not None:
        desc = json.dumps(data.obj["data"], default=str)[:400]
        for r in runs:
            r.prompt_set = f"guidellm data {desc[:80]}"
            r.prompt_set_description = f"guidellm data sources: {desc}"
    return runs
