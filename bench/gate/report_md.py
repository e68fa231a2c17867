"""The PR report as GitHub-flavoured Markdown (pure): what a reviewer decides on first, the rest folded.

For each added record::

    ### <experiment> / <variant>: <title>
    - Valid: ...
    - Against the baseline (<record>): <verdict>
    - Against the previous comparable record (<record>): <verdict>
    - Regressions: ...
    <details> this record's figures and facts </details>
    <details> each comparison: per-level ratios, what is left out of the verdict, notes, info differences </details>

Rows that say nothing are left out: the regression check's "insufficient data" findings become one sentence with
their count, level-table columns no level states are dropped, and info differences that change on every run
(launch command, ports, ids in log paths, creation stamps, media markers) are counted, not listed. Every record
string passes through ``gfm.shown`` (``bench.redact``, then the GFM escape).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.record import Level, Metric

from .gfm import escape_gfm, shown
from .report import ComparisonEntry, RecordReport, RegressionCheck, Report, info_differences

__all__ = ["render_markdown"]

_TITLES = {"baseline": "the baseline", "previous": "the previous comparable record"}
_LIMIT = 300  # characters of one free-text value shown in the report


def _num(v: float | int | None) -> str:
    if v is None:
        return "—"
    if isinstance(v, int):
        return str(v)
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def _metric(m: Metric | None, *keys: str) -> str:
    if m is None:
        return "—"
    for k in keys:
        v = getattr(m, k)
        if v is not None:
            return ("~" if m.approximate else "") + _num(float(v))
    return _num(m.headline())


_LEVEL_COLUMNS: list[tuple[str, Any]] = [
    ("output tok/s", lambda lv: _metric(lv.output_throughput, "value", "mean")),
    ("total tok/s", lambda lv: _metric(lv.total_throughput, "value", "mean")),
    ("per-request tok/s", lambda lv: _metric(lv.per_request_tok_s, "mean", "value", "p50")),
    ("TTFT p50 ms", lambda lv: _metric(lv.ttft_ms, "p50", "mean", "value")),
    ("TPOT mean ms", lambda lv: _metric(lv.tpot_ms, "mean", "p50", "value")),
    ("E2E p50 ms", lambda lv: _metric(lv.e2e_ms, "p50", "mean", "value")),
]


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def _levels_table(levels: Sequence[Level]) -> list[str]:
    """The record's levels; a figure column that no level states is left out."""
    cols = [(name, [fn(lv) for lv in levels]) for name, fn in _LEVEL_COLUMNS]
    cols = [(name, cells) for name, cells in cols if any(c != "—" for c in cells)]
    head = ["level", "done/sent", *(name for name, _ in cols)]
    rows = [
        [shown(lv.key), f"{_num(lv.requests_completed)}/{_num(lv.requests_sent)}", *(cells[i] for _, cells in cols)]
        for i, lv in enumerate(levels)
    ]
    return _table(head, rows)


def _fold(summary: str, body: list[str]) -> list[str]:
    """A ``<details>`` fold. ``summary`` is raw HTML, where Markdown escapes do not apply: it holds the report's
    own words and numbers, never a record string."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]


# ---------------------------------------------------------------- the lead: what a reviewer decides on


def _validity(rr: RecordReport) -> str:
    r = rr.record
    if rr.problems:
        return "- **Valid:** :x: no: " + "; ".join(shown(p, limit=_LIMIT) for p in rr.problems)
    line = (
        f"- **Valid:** yes: loads as schema v{r.schema_version}, sits at its id in its experiment's folder, "
        "holds no secret, duplicates no record"
    )
    state = r.status.state
    if state == "complete":
        return line + f"; status complete ({len(r.levels)} level(s))."
    why = f": {shown(r.status.message, limit=_LIMIT)}" if r.status.message else ", and no message says why"
    return line + f"; :warning: status **{escape_gfm(state)}**{why}."


def _against(rr: RecordReport, kind: str) -> str:
    title = _TITLES[kind]
    entry = next((e for e in rr.comparisons if e.pairing.kind == kind), None)
    if entry is None:
        if kind == "baseline" and rr.baseline_variant == rr.record.variant:
            return f"- **Against {title}:** this record is of the baseline variant ({shown(rr.baseline_variant)})."
        return f"- **Against {title}:** not compared."
    against = entry.pairing.against
    if against is None:
        return f"- **Against {title}:** {shown(entry.pairing.note)}."
    head = f"- **Against {title}** ({shown(against.id)}):"
    if entry.error is not None:
        return f"{head} :warning: the comparison failed: {shown(entry.error, limit=_LIMIT)}"
    data = entry.data or {}
    line = f"{head} {shown(data.get('verdict', 'no verdict'))}"
    warnings = data.get("warnings") or []
    if warnings or data.get("comparable") is False:
        line += f" :warning: **Not apples to apples:** {len(warnings)} context difference(s) beyond the treatment."
    return line


def _flag_item(f: Mapping[str, Any]) -> str:
    return f"  - {shown(f.get('metric'))} at level {shown(f.get('level'))}: {shown(f.get('message'), limit=_LIMIT)}"


def _regressions(rc: RegressionCheck | None) -> list[str]:
    if rc is None:
        return ["- **Regressions:** not checked (this checkout's bench.compare has no regression check)."]
    if rc.error is not None:
        return [f"- **Regressions:** :warning: the check failed: {shown(rc.error, limit=_LIMIT)}"]
    regs, unconfirmed = rc.of_kind("regression"), rc.of_kind("unconfirmed")
    better, thin = rc.of_kind("improvement"), len(rc.of_kind("insufficient_data"))
    history = f"this configuration has {rc.earlier} earlier record(s) on the base branch"
    needed = f", the check needs {rc.min_history}" if rc.min_history is not None else ""
    if thin and not (regs or unconfirmed or better) and rc.min_history is not None and rc.earlier < rc.min_history:
        return [f"- **Regressions:** not checked yet: {history}{needed} ({thin} figure(s) unchecked)."]
    lead = f"**{len(regs)} regression(s) found**" if regs else "none found"
    if unconfirmed:
        lead += f"; {len(unconfirmed)} unconfirmed change(s) (the next record of this configuration decides)"
    if better:
        lead += f"; {len(better)} improvement(s)"
    if thin:
        lead += f"; {thin} figure(s) could not be checked ({history}{needed})"
    return [f"- **Regressions:** {lead}.", *(_flag_item(f) for f in (*regs, *unconfirmed, *better))]


# ---------------------------------------------------------------- the folds


def _ratio_cell(m: Mapping[str, Any]) -> str:
    r, lo, hi = m.get("ratio"), m.get("lo"), m.get("hi")
    if r is None:
        return "—"
    if lo is None or hi is None:
        return f"{r:.2f} (no interval)"
    text = f"{r:.2f} ({lo:.2f}–{hi:.2f})"
    return f"**{text}**" if m.get("resolved") else text


def _level_name(lv: Mapping[str, Any]) -> str:
    if lv.get("concurrency") is not None:
        return f"C={lv['concurrency']}"
    return shown(lv.get("label") or lv.get("key"))


def _ratio_table(data: Mapping[str, Any]) -> tuple[list[str], int]:
    """Levels by metric: ratio and interval; levels with no ratio at all are left out (counted)."""
    columns: dict[str, str] = {}
    for lv in data.get("levels") or []:
        for m in lv.get("metrics") or []:
            if m.get("ratio") is not None:
                arrow = "↑" if m.get("higher_is_better") else "↓"
                columns.setdefault(str(m.get("metric")), f"{shown(m.get('label'))} {arrow}")
    rows, empty = [], 0
    for lv in data.get("levels") or []:
        by_name = {str(m.get("metric")): m for m in lv.get("metrics") or []}
        if not any(by_name.get(k, {}).get("ratio") is not None for k in columns):
            empty += 1
            continue
        first: Mapping[str, Any] = next((by_name[k] for k in columns if k in by_name), {})
        requests = f"{_num(first.get('n_baseline'))} / {_num(first.get('n_candidate'))}"
        excluded = " (left out)" if lv.get("excluded") else ""
        cells = [_ratio_cell(by_name[k]) if k in by_name else "—" for k in columns]
        rows.append([_level_name(lv) + excluded, requests, *cells])
    if not rows:
        return [], empty
    return _table(["level", "requests", *columns.values()], rows), empty


def _bullets(heading: str, items: Sequence[str]) -> list[str]:
    return ["", f"**{heading}**", "", *(f"- {i}" for i in items)] if items else []


def _comparison_fold(entry: ComparisonEntry) -> list[str]:
    data, against = entry.data, entry.pairing.against
    if data is None or against is None:
        return []
    a = shown((data.get("baseline") or {}).get("label", "baseline"))
    b = shown((data.get("candidate") or {}).get("label", "candidate"))
    table, empty = _ratio_table(data)
    confidence = data.get("confidence")
    level = f"{confidence:.0%}" if isinstance(confidence, float) else "confidence"
    body = [
        f"Record: {shown(entry.pairing.against_path)}. Each cell: {b} / {a} and its {level} interval; bold: the "
        "interval excludes 1 (a resolved difference); ↑ higher is better, ↓ lower is better.",
        "",
        *(table or ["No level is present in both."]),
    ]
    if empty:
        body += ["", f"{empty} shared level(s) with no figure stated on both sides are left out."]
    body += _bullets(
        "Not apples to apples", [shown(w.get("message"), limit=_LIMIT) for w in data.get("warnings") or []]
    )
    body += _bullets(
        "Left out of the verdict",
        [f"{shown(e.get('key'))}: {shown(e.get('reason'))}" for e in data.get("excluded") or []],
    )
    notes = [shown(n, limit=_LIMIT) for n in data.get("notes") or []]
    for side, label in (("only_in_baseline", a), ("only_in_candidate", b)):
        if data.get(side):
            notes.append(f"levels only {label} states: {shown(', '.join(map(str, data[side])))}")
    body += _bullets("Notes", notes)
    kept, dropped = info_differences(data)
    rows = [
        f"{shown(d['field'])}: {shown(d['baseline'], limit=160)} → {shown(d['candidate'], limit=160)}" for d in kept
    ]
    if dropped:
        left_out = (
            f"{dropped} info difference(s) that change on every run (launch command, ports, ids in paths, creation "
            "stamps, media markers) are left out."
        )
        body += ["", left_out + ("" if rows else " No other info field differs.")]
    body += _bullets("Info differences (shown, never splitting)", rows)
    resolved = sum(1 for lv in data.get("levels") or [] for m in lv.get("metrics") or [] if m.get("resolved"))
    title = _TITLES[entry.pairing.kind]
    return _fold(f"Against {title}: ratios at {len(table) - 2 if table else 0} level(s), {resolved} resolved", body)


def _record_fold(rr: RecordReport) -> list[str]:
    r, p = rr.record, rr.record.provenance
    facts = [
        f"- **provenance:** {escape_gfm(p.kind)}"
        + (f"; source: {shown(p.source, limit=_LIMIT)}" if p.source else "")
        + (f"; tool: {shown(p.tool)}" if p.tool else "")
        + (f"; measured at {p.measured_at.isoformat()}" if p.measured_at else "")
        + ("; **against a synthetic test server**" if p.test_server else ""),
        f"- **engine:** {shown(r.server.engine)} "
        f"{shown(r.server.version) if r.server.version else '(version not stated)'}"
        f"; model: {shown(r.model.name) if r.model.name else 'not stated'}"
        f"; speculative: {shown(r.speculative.algorithm) if r.is_speculative and r.speculative else 'no'}",
    ]
    if r.status.message:
        facts.append(f"- **status:** {escape_gfm(r.status.state)}: {shown(r.status.message, limit=_LIMIT)}")
    if rr.fingerprint:
        facts.append(f"- **fingerprint:** {shown(rr.fingerprint)}")
    table = _levels_table(r.levels) if r.levels else ["(no levels)"]
    return _fold(f"This record: {len(r.levels)} level(s), provenance, engine, figures", [*facts, "", *table])


def _record_lead(rr: RecordReport) -> list[str]:
    r = rr.record
    title = f": {shown(r.title, limit=200)}" if r.title else ""
    return [
        f"### {shown(r.experiment)} / {shown(r.variant)}{title}",
        "",
        f"File: {shown(rr.path)}",
        "",
        _validity(rr),
        _against(rr, "baseline"),
        _against(rr, "previous"),
        *_regressions(rr.regressions),
        "",
    ]


def _record_folds(rr: RecordReport) -> list[str]:
    order = sorted(rr.comparisons, key=lambda e: e.pairing.kind != "baseline")
    return [*_record_fold(rr), *(line for e in order for line in _comparison_fold(e))]


# ---------------------------------------------------------------- the whole report


def _header(report: Report) -> list[str]:
    c = report.check
    verdict = (
        ":white_check_mark: **The gate passes.**" if c.ok else f":x: **The gate fails: {len(c.failures)} problem(s).**"
    )
    n = len(c.added_files)
    lines = [
        "## benchbook record check",
        "",
        f"{verdict} The change adds {n} file(s) under {shown(c.records_dir)}/. Base {escape_gfm(c.base_sha[:12])} "
        f"({shown(c.base_label)}), head {escape_gfm(c.head_sha[:12])}"
        + (" and the work tree." if c.include_worktree else "."),
        "",
    ]
    if c.failures:
        lines += ["### Problems", "", *(f"- {shown(f.path)}: {shown(f.reason, limit=1000)}" for f in c.failures), ""]
    if report.settings_error:
        lines += [
            f":warning: benchbook.yaml could not be read, comparisons use defaults: {shown(report.settings_error)}",
            "",
        ]
    if not report.compare_available and c.added:
        lines += ["bench.compare is not available in this checkout: comparisons were skipped.", ""]
    return lines


def render_markdown(report: Report, *, max_chars: int | None = None) -> str:
    """The report; with ``max_chars`` (a PR comment's limit), folds are dropped from the last record backwards
    until it fits, and then whole records, each drop said in the report."""
    head = _header(report)
    warnings = report.check.warnings
    tail = _fold(f"{len(warnings)} warning(s)", [f"- {shown(w)}" for w in warnings])
    leads = [_record_lead(rr) for rr in report.records]
    folds = [_record_folds(rr) for rr in report.records]

    def assemble(note: str | None) -> str:
        body = [line for lead, fold in zip(leads, folds, strict=True) for line in (*lead, *fold)]
        lines = [*head, *body, *(tail if warnings else []), *([note] if note else [])]
        return "\n".join(lines).rstrip() + "\n"

    text = assemble(None)
    if max_chars is None or len(text) <= max_chars:
        return text
    dropped_folds = dropped_records = 0
    note = ""
    for i in reversed(range(len(folds))):
        folds[i], dropped_folds = [], dropped_folds + 1
        note = f"_Details of {dropped_folds} record(s) left out to fit a PR comment: see the report artifact._"
        text = assemble(note)
        if len(text) <= max_chars:
            return text
    while leads and len(text) > max_chars:
        leads.pop()
        folds.pop()
        dropped_records += 1
        note = (
            f"_{dropped_records} record(s) and the details of all left out to fit a PR comment: "
            "see the report artifact._"
        )
        text = assemble(note)
    return text
