"""Records built in the tests with the schema models (no files): levels with synthetic per-request samples."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.record.load import load_record
from bench.record.model import Record

ROOT = Path(__file__).resolve().parents[2]
LAB_DIR = ROOT / "records" / "eagle-fast-verify"
LAB_BASELINE = LAB_DIR / "20261130T231000Z-baseline-797fdbd.json"
LAB_EAGLE3 = LAB_DIR / "20261130T231000Z-eagle3-339e97f.json"


def lab_records() -> tuple[Record, Record]:
    return load_record(LAB_BASELINE).record, load_record(LAB_EAGLE3).record


def samples(
    n: int, tok_s: float, *, ttft_ms: float = 50.0, out: int = 128, inp: int = 200, seed: int = 0
) -> dict[str, Any]:
    """``n`` requests decoding at about ``tok_s`` tokens/s each (±10% spread)."""
    rng = np.random.default_rng(seed)
    rates = tok_s * rng.uniform(0.9, 1.1, n)
    ttft = ttft_ms * rng.uniform(0.8, 1.2, n)
    e2e = ttft + out / rates * 1000.0
    return {
        "ttft_ms": [float(x) for x in ttft],
        "e2e_ms": [float(x) for x in e2e],
        "output_tokens": [out] * n,
        "input_tokens": [inp] * n,
    }


def level(
    concurrency: int | None, tok_s: float, *, n: int = 40, label: str | None = None, seed: int = 0, **extra: Any
) -> dict[str, Any]:
    """A measured level: samples, and a duration consistent with ``concurrency`` streams at ``tok_s``."""
    s = samples(n, tok_s, seed=seed)
    c = concurrency or 64
    duration = sum(s["e2e_ms"]) / 1000.0 / c
    out: dict[str, Any] = {
        "concurrency": concurrency,
        "label": label,
        "requests_sent": n,
        "requests_completed": n,
        "duration_s": duration,
        "samples": s,
    }
    out.update(extra)
    return out


def record(
    variant: str,
    levels: Sequence[dict[str, Any]],
    *,
    when: datetime | None = None,
    speculative: bool | None = None,
    run_group: str | None = None,
    overrides: dict[str, Any] | None = None,
    suffix: str = "abcdef0",
) -> Record:
    """A measured record of experiment ``exp``; ``overrides`` sets dotted fields (``environment.gpu.model``)."""
    when = when or datetime(2027, 1, 1, tzinfo=UTC)
    spec = variant != "baseline" if speculative is None else speculative
    data: dict[str, Any] = {
        "id": f"{when.strftime('%Y%m%dT%H%M%SZ')}-{variant}-{suffix}",
        "experiment": "exp",
        "variant": variant,
        "created_at": when.isoformat().replace("+00:00", "Z"),
        "provenance": {"kind": "measured", "tool": "benchbook"},
        "server": {"engine": "sglang", "version": "0.5.3", "args": {"tp": 8, "cuda-graph-max-bs": 256}},
        "model": {"name": "meta-llama/Llama-3.1-8B-Instruct"},
        "environment": {
            "gpu": {"model": "NVIDIA H200", "count": 8, "driver": "580.1"},
            "cuda_runtime": "13.0",
            "env_vars": {"NCCL_ALGO": "Ring"},
            "features": {"flashinfer_allreduce_fusion": True},
            "info": {"hostname": "node-a"},
        },
        "workload": {
            "prompt_set": "coding-agentic",
            "prompt_set_hash": "ab" * 32,
            "max_tokens": 128,
            "temperature": 0.0,
            "ignore_eos": True,
        },
        "levels": [{k: v for k, v in lv.items() if v is not None} for lv in levels],
        "status": {"state": "complete"},
        "run_group": run_group,
    }
    if spec:
        data["draft_model"] = {"name": "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"}
        data["speculative"] = {"algorithm": "EAGLE3", "num_steps": 5, "topk": 4, "num_draft_tokens": 16}
        data["server"]["args"]["speculative-algorithm"] = "EAGLE3"
    for dotted, value in (overrides or {}).items():
        target = data
        *parents, last = dotted.split(".")
        for p in parents:
            target = target.setdefault(p, {})
        target[last] = value
    return Record.model_validate(data)


def later(days: int) -> datetime:
    return datetime(2027, 1, 1, tzinfo=UTC) + timedelta(days=days)
