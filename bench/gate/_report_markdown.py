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
(launch command, ports, ids in log paths, creation stamps, media markers) are counted, not listed. A comparison is
rendered by ``bench.compare``'s one Markdown renderer in the GitHub style (:data:`GFM`). Every record string passes
through ``_gfm.shown`` (``bench.redact``, then the GFM escape).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bench.compare import Flag, MarkdownStyle, render_comparison_markdown
from bench.figures import figure, format_figure
from bench.level_order import level_name
from bench.md_table import md_table
from bench.record import Level

from ._gfm import escape_gfm, shown
from ._report import LEVEL_FIGURES, ComparisonEntry, RecordReport, RegressionCheck, Report, info_differences

__all__ = ["GFM", "render_markdown"]

_TITLES = {"baseline": "the baseline", "previous": "the previous comparable record"}
_LIMIT = 300  # characters of one free-text value shown in the report


def _gfm_box(kind: str, title: str, body: str) -> str:
    return f"**{title}**\n\n{body}\n"


def _gfm_fold(title: str, body: str) -> str:
    return f"<details><summary>{html.escape(title)}</summary>\n\n{body}\n\n</details>\n"


GFM = MarkdownStyle(
    text=lambda t: shown(t, limit=_LIMIT),
    sentence=lambda t: shown(t),
    code=shown,
    record=shown,
    box=_gfm_box,
    fold=_gfm_fold,
)
"""How the PR comment writes what ``bench.compare`` renders: every string inert on GitHub."""


def _num(v: int | None) -> str:
    return "—" if v is None else str(v)


def _levels_table(levels: Sequence[Level]) -> list[str]:
    """The record's levels (:data:`LEVEL_FIGURES`); a figure column that no level states is left out."""
    cols = []
    for key in LEVEL_FIGURES:
        spec = figure(key)
        cells = [format_figure(v[0], approximate=v[1]) if (v := spec.value(lv)) else "—" for lv in levels]
        if any(c != "—" for c in cells):
            cols.append((shown(spec.title), cells))
    head = ["level", "done/sent", *(name for name, _ in cols)]
    rows = [
        [
            shown(level_name(lv)),
            f"{_num(lv.requests_completed)}/{_num(lv.requests_sent)}",
            *(cells[i] for _, cells in cols),
        ]
        for i, lv in enumerate(levels)
    ]
    return md_table(head, rows).split("\n")


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
    c = entry.comparison
    if c is None:
        return f"{head} not compared."
    line = f"{head} {shown(c.verdict)}"
    if c.warnings:
        line += f" :warning: **Not apples to apples:** {len(c.warnings)} context difference(s) beyond the treatment."
    return line


def _flag_item(f: Flag) -> str:
    return f"  - {shown(f.metric)} at level {shown(f.level)}: {shown(f.message, limit=_LIMIT)}"


def _regressions(rc: RegressionCheck) -> list[str]:
    regs, unconfirmed = rc.of_kind("regression"), rc.of_kind("unconfirmed")
    better, thin = rc.of_kind("improvement"), len(rc.of_kind("insufficient_data"))
    history = f"this configuration has {rc.earlier} earlier record(s) on the base branch"
    needed = f", the check needs {rc.min_history}"
    if thin and not (regs or unconfirmed or better) and rc.earlier < rc.min_history:
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


def _comparison_fold(entry: ComparisonEntry) -> list[str]:
    c, against = entry.comparison, entry.pairing.against
    if c is None or against is None:
        return []
    body = [
        f"Record: {shown(entry.pairing.against_path)}.",
        "",
        render_comparison_markdown(c, GFM, verdict=False, long_form=False, info=False, records=False).rstrip(),
    ]
    kept, dropped = info_differences(c)
    rows = [
        f"{shown(d['field'])}: {shown(d['baseline'], limit=160)} → {shown(d['candidate'], limit=160)}" for d in kept
    ]
    if dropped:
        left_out = (
            f"{dropped} info difference(s) that change on every run (launch command, ports, ids in paths, creation "
            "stamps, media markers) are left out."
        )
        body += ["", left_out + ("" if rows else " No other info field differs.")]
    if rows:
        body += ["", "Info differences (shown, never splitting):", "", *(f"- {r}" for r in rows)]
    levels = sum(1 for lv in c.levels if any(m.ratio.value is not None for m in lv.metrics))
    decided = sum(1 for lv in c.levels for m in lv.metrics if m.evidence == "decided")
    title = _TITLES[entry.pairing.kind]
    return _fold(f"Against {title}: ratios at {levels} level(s), {decided} decided", body)


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
