"""The parts of a record page that describe the record itself (pure): its provenance and status boxes, the model
rows of its summary, the server (arguments, launch command, the engine's own payload), what the server reported
against what the config claims, and the workload."""

from __future__ import annotations

import json

from bench.json_indent import dumps_indent2
from bench.md_table import md_table
from bench.record.model import ModelRef, Record

from ._claims import claimed_mark, observed_section
from ._escape import md_code, md_code_block, md_text
from ._format import NOT_STATED, fmt_date
from ._markup import admonition, fact

__all__ = [
    "model_rows",
    "observed_section_if_any",
    "provenance_section",
    "server_section",
    "status_section",
    "workload_section",
]


def model_rows(record: Record, ref: ModelRef | None, label: str, field: str) -> list[list[str]]:
    if ref is None:
        return []

    def mark(name: str) -> str:
        return claimed_mark(record, f"{field}.{name}")

    return [
        [f"{label}", fact(ref.name) + mark("name")],
        [f"{label} revision", fact(ref.revision) + mark("revision")],
        [f"{label} quantization", fact(ref.quantization) + mark("quantization")],
        [f"{label} sha256", md_code(ref.sha256) if ref.sha256 else NOT_STATED],
    ]


def server_section(record: Record) -> str:
    s = record.server
    rows = [
        ["Engine", md_text(s.engine) + claimed_mark(record, "server.engine")],
        ["Version", fact(s.version)],
        ["URL", fact(s.url)],
    ]
    out = ["## Server", "", md_table(["Field", "Value"], rows)]
    if s.args:
        arg_rows = [
            [md_code(k), md_text(json.dumps(v, ensure_ascii=False)) + claimed_mark(record, f"server.args.{k}")]
            for k, v in sorted(s.args.items())
        ]
        what = (
            "Launch arguments"
            if s.command or s.observed is None
            else "Server arguments (as the config states them, with what the server reports)"
        )
        out += ["", f"{what}:", "", md_table(["Argument", "Value"], arg_rows)]
    else:
        out += ["", "Launch arguments: not stated."]
    if s.command:
        out += ["", "Launch command:", "", md_code_block(" ".join(s.command), lang="bash")]
    if s.notes:
        out += ["", *(f"- {md_text(n)}" for n in s.notes)]
    if s.server_info:
        info = dumps_indent2(s.server_info, sort_keys=True)
        out += [
            "",
            admonition(
                "note", "Server info (the engine's own payload)", md_code_block(info, lang="json"), collapsible=True
            ),
        ]
    return "\n".join(out) + "\n"


def observed_section_if_any(record: Record) -> str:
    """What the server reported vs what the config claims (records measured since benchbook asks)."""
    return observed_section(record) if record.server.observed or record.claims or record.mismatches else ""


_PREFIX_TEXT = {
    "unique": "unique: every request opened with its own marker, so repeated prompts could not hit a prefix cache",
    "repeated": "repeated: prompts sent as written, so repeats of a prompt can hit a prefix cache",
}


def workload_section(record: Record) -> str:
    w = record.workload
    cr = f"{w.concurrency_range[0]} … {w.concurrency_range[1]}" if w.concurrency_range else None
    rows = [
        ["Prompt set", md_text(w.prompt_set)],
        ["Prompt set hash", md_code(w.prompt_set_hash) if w.prompt_set_hash else NOT_STATED],
        ["Description", fact(w.prompt_set_description)],
        ["Prompts", fact(w.num_prompts)],
        ["API", fact(w.api)],
        ["Requests per level", fact(w.requests_per_level)],
        ["Warm-up requests", fact(w.warmup_requests)],
        ["Planned levels", fact(", ".join(map(str, w.planned_levels)) if w.planned_levels else None)],
        ["Concurrency range", fact(cr)],
        ["max_tokens", fact(w.max_tokens)],
        ["Temperature", fact(w.temperature)],
        ["ignore_eos", fact(w.ignore_eos)],
        ["Seed", fact(w.seed)],
        ["Prefix", fact(_PREFIX_TEXT.get(w.prefix or "", w.prefix))],
        ["Prefix cache", fact(w.cache_policy)],
    ]
    return "## Workload\n\n" + md_table(["Field", "Value"], rows) + "\n"


def status_section(record: Record) -> str:
    st = record.status
    if st.state == "complete":
        return f"**Status:** complete{(' — ' + md_text(st.message)) if st.message else ''}\n"
    kind = "failure" if st.state == "failed" else "warning"
    body = [md_text(st.message) if st.message else "No message recorded."]
    if st.failed_level is not None:
        body += ["", f"Failed at concurrency {st.failed_level}."]
    if st.log_excerpt:
        body += ["", "Log excerpt:", "", md_code_block(st.log_excerpt)]
    return admonition(kind, f"Run {st.state}", "\n".join(body))


def provenance_section(record: Record) -> str:
    p = record.provenance
    if p.kind == "measured":
        lines = [
            f"**Measured** by {fact(p.tool)}"
            + (f" at {fmt_date(p.measured_at)}" if p.measured_at else "")
            + (" against a synthetic **test server**, not an engine" if p.test_server else "")
            + "."
        ]
        if p.source:
            lines.append(f"Source: {md_text(p.source)}")
        if p.notes:
            lines.append(md_text(p.notes))
        return admonition("info", "Provenance: measured", "\n\n".join(lines))
    lines = [f"**Source:** {md_text(p.source)}", f"**Tool:** {fact(p.tool)}"]
    if p.notes:
        lines.append(md_text(p.notes))
    lines.append(
        "Only the figures the source states are recorded; everything else reads *not stated*. "
        "Figures marked ≈ are given as approximate by the source."
    )
    return admonition("quote", f"Provenance: {p.kind} — cite the source, not this page", "\n\n".join(lines))
