"""The PR report: for each added record its summary and its comparisons; Markdown for people, JSON for machines.

``build_report`` gathers the data (calling ``bench.compare`` when it is importable); ``render_markdown``
and the JSON form are pure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from bench.record import Level, Metric, Record

from .check import CheckResult
from .compare_link import CompareApi, Pairing, baseline_variants, load_compare_api, pairings

__all__ = ["ComparisonEntry", "RecordReport", "Report", "build_report", "render_json", "render_markdown"]


@dataclass(frozen=True)
class ComparisonEntry:
    pairing: Pairing
    markdown: str | None = None
    data: dict[str, Any] | None = None
    flags: list[dict[str, Any]] = field(default_factory=list)
    flags_markdown: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class RecordReport:
    path: str
    record: Record
    fingerprint: str | None
    comparisons: list[ComparisonEntry]


@dataclass(frozen=True)
class Report:
    check: CheckResult
    records: list[RecordReport]
    compare_available: bool
    settings_error: str | None = None


def _flags(api: CompareApi, history: list[Record], record: Record) -> tuple[list[dict[str, Any]], str | None]:
    """Regression flags about ``record`` over its configuration's history (data, Markdown)."""
    if api.flags is None:
        return [], None
    thresholds = getattr(api.settings, "regression", None)
    if thresholds is None:
        thresholds = api.module.RegressionThresholds()
    found = [f for f in api.flags([*history, record], thresholds) if getattr(f, "record_id", None) == record.id]
    data = [
        dataclasses.asdict(f) if dataclasses.is_dataclass(f) and not isinstance(f, type) else {"message": str(f)}
        for f in found
    ]
    md = api.render_flags_markdown(found) if api.render_flags_markdown is not None else None
    return data, md


def _compare(api: CompareApi, record: Record, pairing: Pairing, history: list[Record]) -> ComparisonEntry:
    if pairing.against is None:
        return ComparisonEntry(pairing)
    try:
        comp = api.compare_records([pairing.against], [record], settings=api.settings)
        flags, flags_md = _flags(api, history, record) if pairing.kind == "previous" else ([], None)
        return ComparisonEntry(pairing, api.render_markdown(comp), api.render_json(comp), flags, flags_md)
    except Exception as exc:  # a comparison that cannot be made must not hide the gate's verdict
        return ComparisonEntry(pairing, error=f"{type(exc).__name__}: {exc}")


def build_report(check: CheckResult) -> Report:
    api = load_compare_api(check.repo_root)
    out: list[RecordReport] = []
    baselines = baseline_variants(api, check.repo_root)
    for added in check.added:
        rec = added.record
        if api is None:
            out.append(RecordReport(added.path, rec, None, []))
            continue
        fp = api.fingerprint(rec)
        history = sorted(
            (r for r in check.base_records.values() if r.variant == rec.variant and api.fingerprint(r) == fp),
            key=lambda r: (r.created_at, r.id),
        )
        pairs = pairings(rec, check.base_records, api.fingerprint, baselines)
        entries = [_compare(api, rec, p, history) for p in pairs]
        out.append(RecordReport(added.path, rec, fp, entries))
    return Report(
        check=check,
        records=out,
        compare_available=api is not None,
        settings_error=api.settings_error if api is not None else None,
    )


# ---------------------------------------------------------------- rendering (pure)


def _cell(v: object) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def _metric(m: Metric | None, *keys: str) -> str:
    if m is None:
        return "—"
    for k in keys:
        v = getattr(m, k)
        if v is not None:
            return ("~" if m.approximate else "") + _cell(float(v))
    return _cell(m.headline())


def _level_row(lv: Level) -> list[str]:
    return [
        _cell(lv.key),
        f"{_cell(lv.requests_completed)}/{_cell(lv.requests_sent)}",
        _metric(lv.output_throughput, "value", "mean"),
        _metric(lv.total_throughput, "value", "mean"),
        _metric(lv.per_request_tok_s, "mean", "value", "p50"),
        _metric(lv.ttft_ms, "p50", "mean", "value"),
        _metric(lv.tpot_ms, "mean", "p50", "value"),
        _metric(lv.e2e_ms, "p50", "mean", "value"),
    ]


_HEAD = [
    "level",
    "done/sent",
    "output tok/s",
    "total tok/s",
    "per-request tok/s",
    "TTFT p50 ms",
    "TPOT mean ms",
    "E2E p50 ms",
]


def _summary_md(rr: RecordReport) -> list[str]:
    r = rr.record
    p = r.provenance
    version = _cell(r.server.version) if r.server.version else "(version not stated)"
    lines = [
        f"### `{rr.path}`",
        "",
        f"- **experiment / variant:** {r.experiment} / {r.variant}" + (f" — {_cell(r.title)}" if r.title else ""),
        f"- **provenance:** {p.kind}"
        + (f"; source: {_cell(p.source)}" if p.source else "")
        + (f"; tool: {_cell(p.tool)}" if p.tool else "")
        + (f"; measured at {p.measured_at.isoformat()}" if p.measured_at else "")
        + ("; **against a synthetic test server**" if p.test_server else ""),
        f"- **engine:** {_cell(r.server.engine)} {version}"
        f"; model: {_cell(r.model.name) if r.model.name else 'not stated'}"
        f"; speculative: {_cell(r.speculative.algorithm) if r.is_speculative and r.speculative else 'no'}",
        f"- **status:** {r.status.state}" + (f" — {_cell(r.status.message)}" if r.status.message else ""),
    ]
    if rr.fingerprint:
        lines.append(f"- **fingerprint:** `{rr.fingerprint}`")
    if r.status.state != "complete" and not r.status.message:
        lines.append(f"- :warning: status is **{r.status.state}** and no message explains why")
    lines += ["", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    lines += ["| " + " | ".join(_level_row(lv)) + " |" for lv in r.levels]
    if not r.levels:
        lines.append("| (no levels) |" + " |" * (len(_HEAD) - 1))
    return lines


def _comparison_md(entry: ComparisonEntry) -> list[str]:
    title = {"previous": "Against the latest comparable record", "baseline": "Against the baseline variant"}[
        entry.pairing.kind
    ]
    if entry.pairing.against is None:
        return [f"#### {title}", "", f"_{entry.pairing.note}_", ""]
    lines = [f"#### {title}: `{entry.pairing.against_path}`", ""]
    if entry.error:
        lines.append(f":warning: the comparison failed: {_cell(entry.error)}")
    elif entry.markdown:
        lines.append(entry.markdown.rstrip())
    if entry.flags_markdown:
        lines += ["", "**Regression check against this configuration's history:**", "", entry.flags_markdown.rstrip()]
    return [*lines, ""]


def render_markdown(report: Report) -> str:
    c = report.check
    verdict = ":white_check_mark: passes" if c.ok else f":x: **fails** ({len(c.failures)} problem(s))"
    lines = [
        "## benchbook record check",
        "",
        f"Base: `{c.base_sha[:12]}` ({_cell(c.base_label)}); head: `{c.head_sha[:12]}`"
        + (" + work tree" if c.include_worktree else "")
        + f". The gate {verdict}. Records added: {len(c.added)}.",
        "",
    ]
    if c.failures:
        lines += ["### Problems", "", *[f"- `{f.path}`: {_cell(f.reason)}" for f in c.failures], ""]
    if c.warnings:
        lines += ["### Warnings", "", *[f"- {_cell(w)}" for w in c.warnings], ""]
    if report.settings_error:
        lines += [
            f":warning: benchbook.yaml could not be read, comparisons use defaults: {_cell(report.settings_error)}",
            "",
        ]
    if not report.compare_available and c.added:
        lines += ["_`bench.compare` is not available in this checkout: comparisons were skipped._", ""]
    for rr in report.records:
        lines += [*_summary_md(rr), ""]
        for entry in rr.comparisons:
            lines += _comparison_md(entry)
    return "\n".join(lines).rstrip() + "\n"


def _summary_json(r: Record) -> dict[str, Any]:
    return {
        "id": r.id,
        "experiment": r.experiment,
        "variant": r.variant,
        "title": r.title,
        "provenance": r.provenance.model_dump(mode="json", exclude_none=True),
        "status": r.status.model_dump(mode="json", exclude_none=True),
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


def render_json(report: Report) -> dict[str, Any]:
    c = report.check
    return {
        "ok": c.ok,
        "base": {"label": c.base_label, "sha": c.base_sha},
        "head": {"sha": c.head_sha, "include_worktree": c.include_worktree},
        "failures": [{"path": f.path, "reason": f.reason} for f in c.failures],
        "warnings": list(c.warnings),
        "compare_available": report.compare_available,
        "settings_error": report.settings_error,
        "records": [
            {
                "path": rr.path,
                "fingerprint": rr.fingerprint,
                "summary": _summary_json(rr.record),
                "comparisons": [
                    {
                        "kind": e.pairing.kind,
                        "against": e.pairing.against_path,
                        "note": e.pairing.note,
                        "comparison": e.data,
                        "regression_flags": e.flags,
                        "error": e.error,
                    }
                    for e in rr.comparisons
                ],
            }
            for rr in report.records
        ],
    }
