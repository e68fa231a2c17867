"""Comparisons and environment diffs as JSON-able dicts (pure): ``bench compare --format json``, the PR report's
JSON, the site's comparison downloads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._envdiff import FieldDiff
from ._result import Comparison, MetricComparison

__all__ = ["render_comparison_json", "render_diff_json"]


def _metric_json(m: MetricComparison) -> dict[str, Any]:
    return {
        "metric": m.metric,
        "label": m.label,
        "unit": m.unit,
        "higher_is_better": None if m.neutral else m.higher_is_better,
        "baseline": m.a,
        "candidate": m.b,
        "approximate": m.approximate,
        "ratio": m.ratio.value,
        "lo": m.ratio.lo,
        "hi": m.ratio.hi,
        "resolved": m.ratio.resolved,
        "evidence": m.evidence,
        "n_baseline": m.ratio.n_a,
        "n_candidate": m.ratio.n_b,
        "runs_baseline": m.ratio.runs_a,
        "runs_candidate": m.ratio.runs_b,
        "note": m.note,
    }


def render_comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "baseline": {"label": c.label_a, "ids": list(c.ids_a), "fingerprint": c.fingerprint_a},
        "candidate": {"label": c.label_b, "ids": list(c.ids_b), "fingerprint": c.fingerprint_b},
        "experiment": c.experiment,
        "treatment": list(c.treatment),
        "comparable": c.comparable,
        "cross_context": c.cross_context,
        "context_differences": [{"field": w.field, "baseline": w.a, "candidate": w.b} for w in c.warnings],
        "verdict": c.verdict,
        "noise_floor": c.noise_floor,
        "min_requests": c.min_requests,
        "estimate": c.estimate,
        "confidence": c.confidence,
        "n_boot": c.n_boot,
        "seed": c.seed,
        "levels": [
            {
                "key": lv.key,
                "concurrency": lv.concurrency,
                "label": lv.label,
                "winner": {"a": "baseline", "b": "candidate"}.get(lv.winner, lv.winner),
                "excluded": lv.excluded,
                "failed": lv.failed,
                "metrics": [_metric_json(m) for m in lv.metrics],
            }
            for lv in c.levels
        ],
        "warnings": [{"field": w.field, "baseline": w.a, "candidate": w.b, "message": w.message} for w in c.warnings],
        "excluded": [{"key": e.key, "level": e.name, "reason": e.reason} for e in c.excluded],
        "only_in_baseline": list(c.only_in_a),
        "only_in_candidate": list(c.only_in_b),
        "notes": list(c.notes),
        "info_differences": [{"field": d.field, "baseline": d.a, "candidate": d.b} for d in c.info_differences],
    }


def render_diff_json(rows: Sequence[FieldDiff]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in rows:
        row: dict[str, Any] = {"field": d.field, "role": d.role, "a": d.a, "b": d.b}
        row.update({k: True for k, v in (("claimed_a", d.claimed_a), ("claimed_b", d.claimed_b)) if v})
        out.append(row)
    return out
