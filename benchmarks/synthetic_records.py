"""Synthetic records for the site benchmark, shaped like the shipped H200 measurements.

Written at benchmark time into a temporary folder, never committed, never under ``records/``. Each record is a
copy of one of the measured H200 records in ``records/`` (llama.cpp and SGLang, no speculation and n-gram: eight
concurrency levels 1..128 with every request's samples, so a record is 90-160 KB as the real ones are), with
its figures moved the way nightly runs move:

* about 50 experiments (``n // 20``, at least 1, at most 50), four variants each (a baseline and three
  speculative ones), each run measured twice (two records sharing a ``run_group``: repeats), night after night;
* each configuration (experiment x variant) has its own level of performance; every night and every level adds
  a few percent of noise; one configuration in five gets 12 % slower half-way through (a regression to flag);
* one speculative run in fifty is the partial record (its last level cut), as real campaigns have them;
* each is written as benchbook writes a record today (``dump_record``, which redacts): the llama.cpp templates
  were measured before that, and hold a random marker the site would otherwise hide on every build;
* every latency figure and sample of a level is multiplied by one factor and every rate divided by it, so the
  summaries stay consistent with the samples they came from.

Deterministic: the same ``n`` gives the same records. ``python benchmarks/synthetic_records.py N FOLDER`` writes them.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.record.load import load_record, parse_record  # noqa: E402
from bench.record.store import dump_record  # noqa: E402

__all__ = ["Plan", "plan", "synthetic_record", "write_records"]

# The measured H200 records the synthetic ones are copied from (engine -> role -> file under records/).
TEMPLATES: dict[str, dict[str, str]] = {
    "llama.cpp": {
        "baseline": "h200-ngram/20261130T234109Z-baseline-db2789a.json",
        "speculative": "h200-ngram/20261130T234809Z-ngram-525b430.json",
    },
    "sglang": {
        "baseline": "h200-sglang/20261201T133738Z-baseline-3df25d6.json",
        "speculative": "h200-sglang/20261201T134153Z-ngram-03f63c7.json",
        "partial": "h200-sglang/20261201T134349Z-ngram-9be1c50.json",
    },
}
MODELS = ("SmolLM2-135M-Instruct", "Llama-3.1-8B-Instruct", "Qwen3-8B", "Qwen3-30B-A3B", "gpt-oss-20b")
WORKLOADS = ("coding", "chat", "agentic", "summarise", "rag")
SPECULATIVE = ("ngram", "ngram-k8", "eagle3", "eagle3-topk4", "ngram-mod", "eagle3-steps5")
VARIANTS_PER_EXPERIMENT = 4
REPEATS = 2
START = datetime(2027, 1, 4, 1, 0, tzinfo=UTC)
LATENCY_UNITS = ("ms", "s")
RATE_UNITS = ("tok/s", "req/s")
STATS = ("value", "mean", "p50", "p90", "p99", "min", "max", "stdev")


@dataclass(frozen=True)
class Plan:
    """Where record ``i`` of ``n`` belongs: experiment, variant, night and repeat."""

    experiment: str
    engine: str
    model: str
    variant: str
    night: int
    repeat: int
    configuration: int  # index of experiment x variant, for its own level and its regression


def experiments_for(n: int) -> int:
    return max(1, min(50, n // 20))


def experiment_names(count: int) -> list[str]:
    names = []
    for e in range(count):
        engine = "sglang" if e % 2 else "llamacpp"
        model = MODELS[e % len(MODELS)].lower().replace(".", "")
        names.append(f"h200-{engine}-{model}-{WORKLOADS[(e // 2) % len(WORKLOADS)]}-{e:02d}")
    return names


def plan(i: int, n: int) -> Plan:
    """Record ``i`` of ``n``: nights run over all experiments, then variants, then repeats."""
    exps = experiments_for(n)
    per_night = exps * VARIANTS_PER_EXPERIMENT * REPEATS
    night, rest = divmod(i, per_night)
    e, rest = divmod(rest, VARIANTS_PER_EXPERIMENT * REPEATS)
    v, repeat = divmod(rest, REPEATS)
    variant = "baseline" if v == 0 else SPECULATIVE[(e + v - 1) % len(SPECULATIVE)]
    return Plan(
        experiment=experiment_names(exps)[e],
        engine="sglang" if e % 2 else "llama.cpp",
        model=MODELS[e % len(MODELS)],
        variant=variant,
        night=night,
        repeat=repeat,
        configuration=e * VARIANTS_PER_EXPERIMENT + v,
    )


def _template_texts() -> dict[tuple[str, str], str]:
    """Each template as benchbook writes a record today: the JSON of its current schema (migrated and validated
    once), through ``dump_record``, the one serialiser, which redacts. The two llama.cpp templates were measured
    before records were redacted as they were written, and hold llama.cpp's per-process random media marker, which
    the site hides on every build; a new record never holds it."""
    out = {}
    for engine, roles in TEMPLATES.items():
        for role, rel in roles.items():
            out[(engine, role)] = dump_record(load_record(ROOT / "records" / rel).record)
    return out


def _scale_level(level: dict[str, Any], factor: float) -> None:
    """Latency figures and samples x factor, rates / factor (a slower level delivers fewer tokens per second)."""
    if isinstance(level.get("duration_s"), int | float):
        level["duration_s"] = round(level["duration_s"] * factor, 6)
    for value in level.values():
        if not isinstance(value, dict) or "formula" not in value:
            continue
        unit = value.get("unit")
        scale = factor if unit in LATENCY_UNITS else 1 / factor if unit in RATE_UNITS else None
        if scale is None:
            continue
        for stat in STATS:
            if isinstance(value.get(stat), int | float):
                value[stat] = round(value[stat] * scale, 4)
    samples = level.get("samples") or {}
    for key in ("ttft_ms", "e2e_ms"):
        if isinstance(samples.get(key), list):
            samples[key] = [round(x * factor, 4) if isinstance(x, int | float) else x for x in samples[key]]


def _short_hash(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:7]


def synthetic_record(i: int, n: int, templates: dict[tuple[str, str], str]) -> dict[str, Any]:
    """Record ``i`` of ``n`` as a JSON value (schema of the day)."""
    p = plan(i, n)
    rng = random.Random(i * 7919 + n)
    role = "baseline" if p.variant == "baseline" else "speculative"
    if role == "speculative" and "partial" in TEMPLATES[p.engine] and rng.random() < 0.04:
        role = "partial"  # one speculative run in fifty (half the experiments have a partial template)
    rec: dict[str, Any] = json.loads(templates[(p.engine, role)])
    created = START + timedelta(days=p.night, minutes=p.configuration * 5 + p.repeat * 2)
    stamp = created.strftime("%Y%m%dT%H%M%SZ")
    created_iso = created.isoformat().replace("+00:00", "Z")
    rec["id"] = f"{stamp}-{p.variant}-{_short_hash(n, i)}"
    rec["experiment"] = p.experiment
    rec["variant"] = p.variant
    rec["title"] = f"H200, {p.engine}, {p.model}, {p.variant} (night {p.night + 1}, run {p.repeat + 1})"
    rec["created_at"] = created_iso
    rec["provenance"]["measured_at"] = created_iso
    rec["run_group"] = f"{p.experiment}-{p.variant}-night{p.night:03d}"
    rec["model"]["name"] = p.model
    rec["tags"] = sorted({*rec.get("tags", ()), "synthetic"})
    cfg = random.Random(p.configuration)
    level_of_config = cfg.uniform(0.7, 1.3)
    regression = 1.12 if p.configuration % 5 == 2 and p.night >= 12 else 1.0
    for level in rec["levels"]:
        _scale_level(level, level_of_config * regression * rng.gauss(1.0, 0.03))
    return rec


def write_records(folder: Path, n: int, *, validate_every: int = 97) -> list[Path]:
    """Write ``n`` records under ``folder/<experiment>/<id>.json``; every ``validate_every``-th (and the first of
    each template) is validated here, the build validates them all (a bad one fails the strict build)."""
    templates = _template_texts()
    paths = []
    for i, rec in _records(n, templates):
        if i % validate_every == 0:
            parse_record(rec, f"synthetic #{i}")
        out = folder / rec["experiment"] / f"{rec['id']}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(out)
    return paths


def _records(n: int, templates: dict[tuple[str, str], str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i in range(n):
        yield i, synthetic_record(i, n, templates)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    paths = write_records(Path(argv[1]), int(argv[0]))
    print(f"{len(paths)} records under {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
