"""One page per record: every field, the level tables, charts, downloads (raw JSON, levels CSV)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence

from bench.record.model import Level, Metric, ModelRef, Record

from .blocks import admonition, chart_figure, environment_rows, experiment_link, fact
from .chartdata import ChartLine, concurrency_chart, percentile_chart
from .claims import claimed_mark, observed_section, recipe_section
from .escape import front_matter_title, md_code, md_code_block, md_text
from .failed import record_failed_levels
from .fmt import NOT_STATED, fmt_date, fmt_metric, fmt_number, fmt_stat
from .level_figures import (
    cache_hit_cell,
    figure_csv_columns,
    figure_csv_values,
    prefix_cache_section,
    speculative_section,
)
from .levels import level_name, sorted_levels
from .metrics import metric_spec
from .paths import link, record_csv, record_json, record_page
from .tables import md_table
from .tradeoff import per_gpu, tradeoff_chart

__all__ = ["levels_csv", "record_markdown"]

DIST_FIELDS = (
    ("ttft_ms", "TTFT (ms)"),
    ("tpot_ms", "TPOT (ms)"),
    ("itl_ms", "ITL (ms)"),
    ("e2e_ms", "E2E latency (ms)"),
    ("per_request_tok_s", "Per-request tok/s"),
    ("per_request_tok_s_e2e", "Per-request tok/s incl. TTFT"),
)
METRIC_FIELDS = (
    "output_throughput",
    "total_throughput",
    "request_throughput",
    "per_request_tok_s",
    "per_request_tok_s_e2e",
    "ttft_ms",
    "tpot_ms",
    "itl_ms",
    "e2e_ms",
)
STATS = ("value", "mean", "p50", "p90", "p99", "min", "max", "stdev", "n")


def _columns(levels: list[Level], cols: list[tuple[str, Callable[[Level], str]]]) -> tuple[str, list[str]]:
    """A levels table keeping only columns that some level states; returns (table, names of empty columns)."""
    kept = [(name, fn) for name, fn in cols if any(fn(lv) != "—" for lv in levels)]
    empty = [name for name, fn in cols if (name, fn) not in kept]
    header = ["Level", *(name for name, _ in kept)]
    rows = [[md_text(level_name(lv)), *(fn(lv) for _, fn in kept)] for lv in levels]
    return md_table(header, rows, align="l" + "r" * len(kept)), empty


def _int(v: int | float | None) -> str:
    return fmt_number(v) if v is not None else "—"


def _tokens(lv: Level) -> str:
    t = lv.output_tokens
    return f"{fmt_number(t.total)} ({md_text(t.source)})" if t and t.total is not None else "—"


def _finish(lv: Level) -> str:
    return md_text(", ".join(f"{k}: {v}" for k, v in sorted(lv.finish_reasons.items()))) or "—"


def _metric_cell(field: str) -> Callable[[Level], str]:
    def cell(lv: Level) -> str:
        m = getattr(lv, field)
        if not isinstance(m, Metric):
            return "—"
        text = fmt_metric(m)
        return f"{text} (n={m.n})" if m.n is not None and m.value is None else text

    return cell


def _levels_section(levels: list[Level]) -> str:
    failed: list[tuple[str, Callable[[Level], str]]] = [
        ("Level failed", lambda lv: f"**failed**: {md_text(lv.failure)}" if lv.failure else "—")
    ]
    cols: list[tuple[str, Callable[[Level], str]]] = [
        *(failed if any(lv.failed for lv in levels) else []),
        ("Requests sent", lambda lv: _int(lv.requests_sent)),
        ("Completed", lambda lv: _int(lv.requests_completed)),
        ("Failed", lambda lv: _int(lv.requests_failed)),
        ("Warm-up", lambda lv: _int(lv.warmup_requests)),
        ("Duration (s)", lambda lv: _int(lv.duration_s)),
        ("Output tok/s", _metric_cell("output_throughput")),
        ("Total tok/s", _metric_cell("total_throughput")),
        ("Req/s", _metric_cell("request_throughput")),
        ("Per-request tok/s", _metric_cell("per_request_tok_s")),
        ("Per-request tok/s incl. TTFT", _metric_cell("per_request_tok_s_e2e")),
        ("Output tokens (source)", _tokens),
        ("Cache-hit share", cache_hit_cell),
        ("Finish reasons", _finish),
        ("Samples kept", lambda lv: str(len(lv.samples.ttft_ms)) if lv.samples else "—"),
    ]
    table, empty = _columns(levels, cols)
    out = [table]
    if empty:
        out.append(f"\nNot stated for any level of this record: {md_text(', '.join(empty))}.")
    return "\n".join(out)


def _distributions(levels: list[Level]) -> str:
    rows = []
    for lv in levels:
        for field, label in DIST_FIELDS:
            m = getattr(lv, field)
            if not isinstance(m, Metric) or all(getattr(m, s) is None for s in ("mean", "p50", "p90", "p99")):
                continue
            rows.append(
                [
                    md_text(level_name(lv)),
                    md_text(label),
                    *(fmt_stat(m, s) for s in ("mean", "p50", "p90", "p99", "min", "max")),
                    _int(m.n),
                ]
            )
    if not rows:
        return ""
    table = md_table(["Level", "Figure", "mean", "p50", "p90", "p99", "min", "max", "n"], rows, align="llrrrrrrr")
    return (
        "## Latency and per-request distributions\n\n"
        + table
        + "\n\n*n* is the number of requests each figure rests on; with fewer than about 100, p99 is close to the "
        "maximum.\n"
    )


def _errors(levels: list[Level]) -> str:
    rows = []
    for lv in levels:
        e = lv.errors
        if e is None or (not e.by_kind and not e.examples and not e.error_rate):
            continue
        rate = f"{e.error_rate:.1%}" if e.error_rate is not None else NOT_STATED
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(e.by_kind.items()))
        examples = "; ".join(x[:200] for x in e.examples[:3])
        rows.append(
            [
                md_text(level_name(lv)),
                rate,
                "**yes**" if e.flagged else "no",
                md_text(kinds) or "—",
                md_text(examples) or "—",
            ]
        )
    if not rows:
        return ""
    return "## Errors\n\n" + md_table(["Level", "Error rate", "Flagged", "By kind", "Examples"], rows) + "\n"


def _client_load(levels: list[Level]) -> str:
    """The harness's own CPU use per level, to compare with its measured ceiling before blaming the server."""
    rows = [
        [
            md_text(level_name(lv)),
            f"{lv.client.cpu_percent:,.1f}",
            f"{lv.client.token_events_per_s:,.0f}",
            f"{lv.client.token_events:,}",
            f"{lv.client.wall_s:,.1f}",
        ]
        for lv in levels
        if lv.client is not None
    ]
    if not rows:
        return ""
    intro = (
        "What the benchmark client itself spent on each level (warm-up included; 100% = one core). Compare the "
        "token-event rate with the client's ceiling measured by `benchmarks/client_ceiling.py` on the same host "
        "before reading a plateau as the server's.\n\n"
    )
    header = ["Level", "Client CPU %", "Token events/s", "Token events", "Wall (s)"]
    return "## Benchmark client load\n\n" + intro + md_table(header, rows, align="lrrrr") + "\n"


def _figure_notes(levels: list[Level]) -> str:
    """Formula names and the source's notes on figures, so every number says where it comes from."""
    formulas: dict[tuple[str, str, str], None] = {}
    notes = []
    for lv in levels:
        for field in METRIC_FIELDS:
            m = getattr(lv, field)
            if isinstance(m, Metric):
                formulas[(field, m.formula, m.unit)] = None
                if m.note:
                    notes.append(f"- {md_text(level_name(lv))}, {md_text(field)}: {md_text(m.note)}")
    if not formulas:
        return ""
    rows = [[md_code(f), md_text(formula), md_text(unit)] for f, formula, unit in formulas]
    out = "## How the figures were computed\n\n" + md_table(["Field", "Formula", "Unit"], rows) + "\n"
    if notes:
        out += "\nNotes on figures:\n\n" + "\n".join(notes) + "\n"
    return out


def _charts(record: Record) -> str:
    parts = []
    groups = [
        ("throughput", "Throughput vs concurrency", "Throughput (tok/s)", ("output_throughput", "total_throughput")),
        (
            "per-request",
            "Per-request tok/s vs concurrency",
            "Per-request tok/s",
            ("per_request_tok_s", "per_request_tok_s_e2e"),
        ),
    ]
    for key, title, y_title, metric_keys in groups:
        lines: list[ChartLine] = []
        for k in metric_keys:
            spec = metric_spec(k)
            if any(spec.figure(lv) is not None for lv in record.levels):
                lines.append((spec.label, record, spec))
        if lines:
            chart = concurrency_chart(lines, title=title, y_title=y_title, chart_id=f"chart-{key}")
            parts.append(chart_figure(chart))
    unit = "per GPU" if per_gpu([record]) else "per server"
    tradeoff = tradeoff_chart(
        [(record.variant, record)], title=f"Throughput {unit} vs per-request speed", chart_id="chart-tradeoff"
    )
    if not tradeoff.empty:
        parts.append(chart_figure(tradeoff, "Points labelled by concurrency; ringed points form the Pareto front."))
    for field, label in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT")):
        chart = percentile_chart(
            [(record.variant, record)],
            field,
            title=f"{label} p50 / p90 / p99 vs concurrency",
            y_title=f"{label} (ms)",
            chart_id=f"chart-{field}",
        )
        if not chart.empty:
            parts.append(chart_figure(chart))
    return ("## Charts\n\n" + "\n".join(parts)) if parts else ""


def _model(record: Record, ref: ModelRef | None, label: str, field: str) -> list[list[str]]:
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


def _server(record: Record) -> str:
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
        info = json.dumps(s.server_info, indent=2, sort_keys=True, ensure_ascii=False)
        out += [
            "",
            admonition(
                "note", "Server info (the engine's own payload)", md_code_block(info, lang="json"), collapsible=True
            ),
        ]
    return "\n".join(out) + "\n"


def _observed(record: Record) -> str:
    """What the server reported vs what the config claims (records measured since benchbook asks)."""
    return observed_section(record) if record.server.observed or record.claims or record.mismatches else ""


_PREFIX_TEXT = {
    "unique": "unique: every request opened with its own marker, so repeated prompts could not hit a prefix cache",
    "repeated": "repeated: prompts sent as written, so repeats of a prompt can hit a prefix cache",
}


def _workload(record: Record) -> str:
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


def _status(record: Record) -> str:
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


def _provenance(record: Record) -> str:
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


def record_markdown(
    record: Record,
    *,
    summary_rows: Sequence[list[str]] = (),
    note: str = "",
    sections: Sequence[str] = (),
) -> str:
    """The whole record page (Markdown).

    What depends on the other records and on git (``bench.site.record_extras``) comes in as Markdown:
    ``summary_rows`` extend the summary table, ``note`` goes under the downloads line, ``sections`` at the end.
    """
    page = record_page(record)
    levels = sorted_levels(record.levels)
    sp = record.speculative
    bb = record.benchbook
    summary = [
        ["Id", md_code(record.id)],
        ["Experiment", experiment_link(record.experiment, page)],
        ["Variant", md_text(record.variant)],
        ["Created", fmt_date(record.created_at)],
        ["Provenance", md_text(record.provenance.kind)],
        ["Status", md_text(record.status.state)],
        [
            "Engine",
            md_text(record.server.engine + (f" {record.server.version}" if record.server.version else ""))
            + claimed_mark(record, "server.engine"),
        ],
        *_model(record, record.model, "Model", "model"),
        *_model(record, record.draft_model, "Draft model", "draft_model"),
        [
            "Speculative decoding",
            (md_text(sp.algorithm) if sp and sp.algorithm else "none") + claimed_mark(record, "speculative.algorithm"),
        ],
    ]
    if sp is not None and sp.algorithm:
        summary += [
            ["Speculative steps", fact(sp.num_steps) + claimed_mark(record, "speculative.num_steps")],
            ["Speculative topk", fact(sp.topk) + claimed_mark(record, "speculative.topk")],
            ["Draft tokens", fact(sp.num_draft_tokens) + claimed_mark(record, "speculative.num_draft_tokens")],
            *[
                [md_code(k), md_text(json.dumps(v)) + claimed_mark(record, f"speculative.extra.{k}")]
                for k, v in sorted(sp.extra.items())
            ],
        ]
        if sp.notes:
            summary.append(["Speculation notes", md_text(sp.notes)])
    summary += [
        [
            "benchbook",
            fact(" ".join(x for x in (bb.version, bb.commit) if x) or None)
            + (" (uncommitted changes)" if bb.dirty else ""),
        ],
        ["Run group", fact(record.run_group)],
        ["Tags", md_text(", ".join(record.tags)) if record.tags else "none"],
        *summary_rows,
    ]
    out = [
        front_matter_title(record.title or record.id) + f"# {md_text(record.title or record.id)}",
        "",
        _provenance(record),
        _status(record),
    ]
    if record.description:
        out += [md_text(record.description), ""]
    out += [
        f"Downloads: [raw JSON record]({link(page, record_json(record))}) · "
        f"[levels as CSV]({link(page, record_csv(record))})",
        "",
        *([note] if note else []),
        "## Summary",
        "",
        md_table(["Field", "Value"], summary),
        "",
        "## Levels",
        "",
        *[box for box in (record_failed_levels(levels),) if box],
        _levels_section(levels) if levels else "*This record has no levels.*",
        "",
        _distributions(levels),
        "\n".join(section for section in (speculative_section(levels), prefix_cache_section(levels)) if section),
        _errors(levels),
        *(section for section in (_client_load(levels),) if section),
        _charts(record),
        _figure_notes(levels),
        "## Environment",
        "",
        md_table(
            ["Field", "Value"],
            [list(r) for r in environment_rows(record.environment, claimed=lambda f: claimed_mark(record, f))],
        ),
        "",
        _server(record),
        *(part for part in (_observed(record),) if part),
        _workload(record),
        *(part for part in (recipe_section(record),) if part),
        *sections,
    ]
    return "\n".join(part for part in out if part is not None).rstrip() + "\n"


def _csv_safe(v: object) -> object:
    """Text cells starting like a spreadsheet formula get a leading quote; numbers pass unchanged."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


def levels_csv(record: Record) -> str:
    """One row per level; one column per statistic any level states."""
    levels = sorted_levels(record.levels)
    cols = ["concurrency", "label", "requests_sent", "requests_completed", "requests_failed", "duration_s"]
    metric_cols = [
        (f, s)
        for f in METRIC_FIELDS
        for s in STATS
        if any(isinstance(getattr(lv, f), Metric) and getattr(getattr(lv, f), s) is not None for lv in levels)
    ]
    approx_cols = [f for f in METRIC_FIELDS if any(isinstance(getattr(lv, f), Metric) for lv in levels)]
    spec = any(lv.speculative and lv.speculative.accept_length for lv in levels)
    figures = figure_csv_columns(levels)
    header = [*cols, *(f"{f}_{s}" for f, s in metric_cols), *(f"{f}_approximate" for f in approx_cols)]
    if spec:
        header.append("accept_length")
    header += figures
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for lv in levels:
        row: list[object] = [getattr(lv, c) for c in cols]
        row += [getattr(getattr(lv, f), s) if isinstance(getattr(lv, f), Metric) else None for f, s in metric_cols]
        row += [getattr(lv, f).approximate if isinstance(getattr(lv, f), Metric) else None for f in approx_cols]
        if spec:
            acc = lv.speculative.accept_length if lv.speculative else None
            row.append(acc.headline() if acc else None)
        row += figure_csv_values(lv, figures)
        w.writerow(["" if v is None else _csv_safe(v) for v in row])
    return buf.getvalue()
