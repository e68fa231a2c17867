"""The PR report: for each added record what a reviewer decides on (validity, the verdicts against the experiment's
baseline and the previous comparable record, regressions), then the detail. Markdown for the PR comment
(``bench.gate._report_markdown``), JSON for machines (here).

``build_report`` gathers the data with ``bench.compare`` (comparisons, fingerprints, regression flags); the
renderers are pure. Every string that reaches either form passes through ``bench.redact``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.compare import (
    Comparison,
    Flag,
    compare_records,
    context_warnings,
    fingerprint,
    flags,
    render_comparison_json,
)
from bench.dataframe import frame_rows, record_cells
from bench.record import Record
from bench.redact import redact_text, redact_value

from ._pairings import Pairing, baseline_variants, gate_settings, pairings
from .check import CheckResult

__all__ = [
    "LEVEL_FIGURES",
    "ComparisonEntry",
    "RecordReport",
    "RegressionCheck",
    "Report",
    "build_report",
    "info_differences",
    "render_json",
]

# The figures the report shows for each level of an added record (keys of ``bench.figures``).
LEVEL_FIGURES = ("output_throughput", "total_throughput", "per_request_tok_s", "ttft_p50", "tpot_ms", "e2e_p50")


@dataclass(frozen=True)
class ComparisonEntry:
    pairing: Pairing
    comparison: Comparison | None = None  # None: nothing to compare with


@dataclass(frozen=True)
class RegressionCheck:
    """The regression rule over this configuration's history on the base, applied to the added record."""

    earlier: int  # records of the same configuration (fingerprint + variant) on the base
    min_history: int
    flags: list[Flag] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Flag]:
        return [f for f in self.flags if f.kind == kind]


@dataclass(frozen=True)
class RecordReport:
    path: str
    record: Record
    fingerprint: str
    comparisons: list[ComparisonEntry]
    baseline_variant: str
    regressions: RegressionCheck
    problems: list[str] = field(default_factory=list)  # the gate's failures for this file


@dataclass(frozen=True)
class Report:
    check: CheckResult
    records: list[RecordReport]
    settings_error: str | None = None


def build_report(check: CheckResult) -> Report:
    settings, settings_error = gate_settings(check.repo_root)
    baselines = baseline_variants(settings)
    thresholds = settings.regression

    def comparable(a: Record, b: Record) -> bool:
        return not context_warnings(a, b, settings.treatment_for(b.experiment))

    out: list[RecordReport] = []
    for added in check.added:
        rec = added.record
        problems = [f.reason for f in check.failures if f.path == added.path]
        fp = fingerprint(rec)
        history = sorted(
            (r for r in check.base_records.values() if r.variant == rec.variant and fingerprint(r) == fp),
            key=lambda r: (r.created_at, r.id),
        )
        entries = [
            ComparisonEntry(p, compare_records([p.against], [rec], settings=settings) if p.against else None)
            for p in pairings(rec, check.base_records, fingerprint, baselines, comparable=comparable)
        ]
        found = [f for f in flags([*history, rec], thresholds) if f.record_id == rec.id]
        regressions = RegressionCheck(len(history), thresholds.min_history, found)
        baseline = baselines.get(rec.experiment, "baseline")
        out.append(RecordReport(added.path, rec, fp, entries, baseline, regressions, problems))
    return Report(check=check, records=out, settings_error=settings_error)


# ---------------------------------------------------------------- info differences that say something

# Fields that differ from run to run whatever was measured: the launch command (it restates ``server.args``, with
# a fresh port), llama.cpp's random per-run media marker.
PER_RUN_FIELDS = ("server.command",)
PER_RUN_KEYS = frozenset({"media_marker", "created"})
_PORT = re.compile(r"(://[^/\s:@]+):\d+")


def _normalised(value: Any, ids: tuple[str, ...]) -> Any:
    """``value`` with what changes on every run masked: record ids (in log paths), ports, creation stamps."""
    if isinstance(value, str):
        for rid in ids:
            value = value.replace(rid, "<id>")
        return _PORT.sub(r"\1:<port>", value)
    if isinstance(value, Mapping):
        return {k: _normalised(v, ids) for k, v in value.items() if k not in PER_RUN_KEYS}
    if isinstance(value, list | tuple):
        return [_normalised(v, ids) for v in value]
    return value


def info_differences(c: Comparison) -> tuple[list[dict[str, Any]], int]:
    """The comparison's info differences that say something, with values redacted by field name; and how many
    were left out because they differ on every run (:data:`PER_RUN_FIELDS`, :data:`PER_RUN_KEYS`, or values
    equal once record ids, ports and creation stamps are masked)."""
    ids = (*c.ids_a, *c.ids_b)
    kept: list[dict[str, Any]] = []
    dropped = 0
    for d in c.info_differences:
        last = d.field.rsplit(".", 1)[-1]
        if d.field in PER_RUN_FIELDS or last in PER_RUN_KEYS or _normalised(d.a, ids) == _normalised(d.b, ids):
            dropped += 1
            continue
        kept.append({"field": d.field, "baseline": redact_value(last, d.a), "candidate": redact_value(last, d.b)})
    return kept, dropped


# ---------------------------------------------------------------- JSON (pure)


def _strings_redacted(value: Any) -> Any:
    """Every string in a JSON-like tree (keys included) through ``redact_text``."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {redact_text(str(k)): _strings_redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strings_redacted(v) for v in value]
    return value


def _summary_json(r: Record) -> dict[str, Any]:
    """The record at a glance: its frame columns (``bench.frame``) and its levels' :data:`LEVEL_FIGURES`."""
    cells = record_cells(r)
    return {
        "id": r.id,
        **{k: cells[k] for k in ("experiment", "variant", "title", "engine", "engine_version", "model", "speculative")},
        "provenance": r.provenance.model_dump(mode="json", exclude_none=True),
        "status": r.status.model_dump(mode="json", exclude_none=True, exclude={"log_excerpt"}),
        "levels": [
            {k: row[k] for k in ("level", "concurrency", "requests_sent", "requests_completed", *LEVEL_FIGURES)}
            for row in frame_rows([r], intervals=False)
        ],
    }


def _comparison_json(e: ComparisonEntry) -> dict[str, Any]:
    c = e.comparison
    data = None
    if c is not None:
        kept, dropped = info_differences(c)
        data = {**render_comparison_json(c), "info_differences": kept, "per_run_differences_left_out": dropped}
    return {
        "kind": e.pairing.kind,
        "against": e.pairing.against_path,
        "note": e.pairing.note,
        "verdict": c.verdict if c is not None else None,
        "comparable": c.comparable if c is not None else None,
        "comparison": data,
    }


def _regressions_json(rc: RegressionCheck) -> dict[str, Any]:
    def listed(kind: str) -> list[dict[str, Any]]:
        return [dataclasses.asdict(f) for f in rc.of_kind(kind)]

    return {
        "earlier_records": rc.earlier,
        "min_history": rc.min_history,
        "regressions": listed("regression"),
        "improvements": listed("improvement"),
        "unconfirmed": listed("unconfirmed"),
        "insufficient_data": len(rc.of_kind("insufficient_data")),
    }


def render_json(report: Report) -> dict[str, Any]:
    c = report.check
    out = {
        "ok": c.ok,
        "base": {"label": c.base_label, "sha": c.base_sha},
        "head": {"sha": c.head_sha, "include_worktree": c.include_worktree},
        "records_dir": c.records_dir,
        "added_files": list(c.added_files),
        "secret_files": list(c.secret_files),
        "failures": [{"path": f.path, "reason": f.reason} for f in c.failures],
        "warnings": list(c.warnings),
        "settings_error": report.settings_error,
        "records": [
            {
                "path": rr.path,
                "valid": not rr.problems,
                "problems": rr.problems,
                "fingerprint": rr.fingerprint,
                "baseline_variant": rr.baseline_variant,
                "summary": _summary_json(rr.record),
                "comparisons": [_comparison_json(e) for e in rr.comparisons],
                "regression_check": _regressions_json(rr.regressions),
            }
            for rr in report.records
        ],
    }
    result: dict[str, Any] = _strings_redacted(out)
    return result
