"""The PR report: for each added record what a reviewer decides on (validity, the verdicts against the experiment's
baseline and the previous comparable record, regressions), then the detail. Markdown for the PR comment
(``bench.gate.report_md``), JSON for machines (here).

``build_report`` gathers the data, calling ``bench.compare`` through its public functions when it is importable
(its JSON form is what the report reads, so a change in its wording or its dataclasses does not break the gate).
The renderers are pure. Every string that reaches either form passes through ``bench.redact``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.record import Record
from bench.redact import redact_text, redact_value

from .check import CheckResult
from .compare_link import CompareApi, Pairing, baseline_variants, load_compare_api, pairings

__all__ = [
    "ComparisonEntry",
    "RecordReport",
    "RegressionCheck",
    "Report",
    "build_report",
    "info_differences",
    "render_json",
]


@dataclass(frozen=True)
class ComparisonEntry:
    pairing: Pairing
    data: dict[str, Any] | None = None  # bench.compare's JSON form of the comparison
    error: str | None = None


@dataclass(frozen=True)
class RegressionCheck:
    """The regression rule over this configuration's history on the base, applied to the added record."""

    earlier: int  # records of the same configuration (fingerprint + variant) on the base
    min_history: int | None
    flags: list[dict[str, Any]] = field(default_factory=list)  # kind, metric, level, message, ...
    error: str | None = None

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.flags if f.get("kind") == kind]


@dataclass(frozen=True)
class RecordReport:
    path: str
    record: Record
    fingerprint: str | None
    comparisons: list[ComparisonEntry]
    baseline_variant: str | None = None
    regressions: RegressionCheck | None = None
    problems: list[str] = field(default_factory=list)  # the gate's failures for this file


@dataclass(frozen=True)
class Report:
    check: CheckResult
    records: list[RecordReport]
    compare_available: bool
    settings_error: str | None = None


def _flag_dict(f: object) -> dict[str, Any]:
    if dataclasses.is_dataclass(f) and not isinstance(f, type):
        return dataclasses.asdict(f)
    return {k: getattr(f, k) for k in ("kind", "metric", "level", "record_id", "message") if hasattr(f, k)}


def _regressions(api: CompareApi, history: list[Record], record: Record) -> RegressionCheck | None:
    if api.flags is None:
        return None
    thresholds = getattr(api.settings, "regression", None)
    if thresholds is None:
        thresholds = api.module.RegressionThresholds()
    min_history = getattr(thresholds, "min_history", None)
    try:
        found = [f for f in api.flags([*history, record], thresholds) if getattr(f, "record_id", None) == record.id]
    except Exception as exc:  # a check that cannot run must not hide the gate's verdict
        return RegressionCheck(len(history), min_history, error=f"{type(exc).__name__}: {exc}")
    return RegressionCheck(len(history), min_history, [_flag_dict(f) for f in found])


def _compare(api: CompareApi, record: Record, pairing: Pairing) -> ComparisonEntry:
    if pairing.against is None:
        return ComparisonEntry(pairing)
    try:
        comp = api.compare_records([pairing.against], [record], settings=api.settings)
        return ComparisonEntry(pairing, api.render_json(comp))
    except Exception as exc:  # a comparison that cannot be made must not hide the gate's verdict
        return ComparisonEntry(pairing, error=f"{type(exc).__name__}: {exc}")


def build_report(check: CheckResult) -> Report:
    api = load_compare_api(check.repo_root)
    out: list[RecordReport] = []
    baselines = baseline_variants(api, check.repo_root)
    for added in check.added:
        rec = added.record
        problems = [f.reason for f in check.failures if f.path == added.path]
        baseline = baselines.get(rec.experiment, "baseline")
        if api is None:
            out.append(RecordReport(added.path, rec, None, [], baseline, None, problems))
            continue
        fp = api.fingerprint(rec)
        history = sorted(
            (r for r in check.base_records.values() if r.variant == rec.variant and api.fingerprint(r) == fp),
            key=lambda r: (r.created_at, r.id),
        )
        entries = [_compare(api, rec, p) for p in pairings(rec, check.base_records, api.fingerprint, baselines)]
        out.append(RecordReport(added.path, rec, fp, entries, baseline, _regressions(api, history, rec), problems))
    return Report(
        check=check,
        records=out,
        compare_available=api is not None,
        settings_error=api.settings_error if api is not None else None,
    )


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


def info_differences(data: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The comparison's info differences that say something, with values redacted by field name; and how many
    were left out because they differ on every run (:data:`PER_RUN_FIELDS`, :data:`PER_RUN_KEYS`, or values
    equal once record ids, ports and creation stamps are masked)."""
    ids = tuple(
        str(i)
        for side in ("baseline", "candidate")
        for i in (data.get(side) or {}).get("ids", [])
        if isinstance(i, str)
    )
    kept: list[dict[str, Any]] = []
    dropped = 0
    for d in data.get("info_differences") or []:
        name = str(d.get("field", ""))
        last = name.rsplit(".", 1)[-1]
        a, b = d.get("baseline"), d.get("candidate")
        if name in PER_RUN_FIELDS or last in PER_RUN_KEYS or _normalised(a, ids) == _normalised(b, ids):
            dropped += 1
            continue
        kept.append({"field": name, "baseline": redact_value(last, a), "candidate": redact_value(last, b)})
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
    return {
        "id": r.id,
        "experiment": r.experiment,
        "variant": r.variant,
        "title": r.title,
        "provenance": r.provenance.model_dump(mode="json", exclude_none=True),
        "status": r.status.model_dump(mode="json", exclude_none=True, exclude={"log_excerpt"}),
        "engine": r.server.engine,
        "engine_version": r.server.version,
        "model": r.model.name,
        "speculative": r.speculative.algorithm if r.speculative else None,
        "levels": [
            {
                "level": lv.key,
                "concurrency": lv.concurrency,
                "requests_sent": lv.requests_sent,
                "requests_completed": lv.requests_completed,
                **{
                    name: (m.headline() if m is not None else None)
                    for name, m in (
                        ("output_throughput", lv.output_throughput),
                        ("total_throughput", lv.total_throughput),
                        ("per_request_tok_s", lv.per_request_tok_s),
                        ("ttft_ms", lv.ttft_ms),
                        ("tpot_ms", lv.tpot_ms),
                        ("e2e_ms", lv.e2e_ms),
                    )
                },
            }
            for lv in r.levels
        ],
    }


def _comparison_json(e: ComparisonEntry) -> dict[str, Any]:
    data = None
    if e.data is not None:
        kept, dropped = info_differences(e.data)
        data = {**e.data, "info_differences": kept, "per_run_differences_left_out": dropped}
    return {
        "kind": e.pairing.kind,
        "against": e.pairing.against_path,
        "note": e.pairing.note,
        "verdict": e.data.get("verdict") if e.data is not None else None,
        "comparable": e.data.get("comparable") if e.data is not None else None,
        "comparison": data,
        "error": e.error,
    }


def _regressions_json(rc: RegressionCheck | None) -> dict[str, Any] | None:
    if rc is None:
        return None
    return {
        "earlier_records": rc.earlier,
        "min_history": rc.min_history,
        "regressions": rc.of_kind("regression"),
        "improvements": rc.of_kind("improvement"),
        "unconfirmed": rc.of_kind("unconfirmed"),
        "insufficient_data": len(rc.of_kind("insufficient_data")),
        "error": rc.error,
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
        "compare_available": report.compare_available,
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
