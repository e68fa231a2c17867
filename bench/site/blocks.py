"""Markdown fragments shared by generated pages and shortcodes.

Each function is pure: data in, Markdown out. ``page`` is the docs-relative path of the page the
fragment lands on, so that links are relative to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.record.load import LoadedRecord
from bench.record.model import Environment, Record

from .charts import Chart, render_svg
from .data import SiteData
from .deadends import DeadEnd
from .escape import html_attr, html_text, md_code, md_text
from .fmt import NOT_STATED, fmt_metric
from .gitinfo import GitInfo, commit_markdown
from .paths import experiment_page, link, record_page
from .tables import md_table

__all__ = [
    "admonition",
    "chart_figure",
    "dead_end_summary",
    "dead_ends_list",
    "environment_rows",
    "environment_table",
    "errors_box",
    "experiment_link",
    "fact",
    "gpu_text",
    "record_link",
    "records_table",
    "related_records",
]

FEATURE_LABELS = {
    "nccl_tuned": "NCCL tuned",
    "flashinfer_allreduce_fusion": "FlashInfer allreduce fusion",
    "sglang_sm120_patch": "SGLang patched for SM120",
    "cuda_graph": "CUDA graphs",
}


def admonition(kind: str, title: str, body: str, *, collapsible: bool = False) -> str:
    """A Material admonition; ``title`` and ``body`` must already be escaped Markdown."""
    marker = "???" if collapsible else "!!!"
    indented = "\n".join(("    " + line) if line.strip() else "" for line in body.split("\n"))
    return f'{marker} {kind} "{title.replace(chr(34), "&quot;")}"\n\n{indented}\n'


def errors_box(errors: Sequence[Exception]) -> str:
    """The visible error box shown (in a non-strict build) when records or dead ends failed to load."""
    if not errors:
        return ""
    n = len(errors)
    items = "\n".join(f"- {md_text(str(e))}" for e in errors)
    body = (
        f"{n} file(s) could not be read and are left out of this site. "
        "A strict build (`mkdocs build --strict`) fails on these.\n\n" + items
    )
    return admonition("failure", f"{n} bad record or dead-end file(s)", body)


def record_link(record: Record, page: str, *, text: str | None = None) -> str:
    return f"[{md_text(text or record.id)}]({link(page, record_page(record))})"


def experiment_link(experiment: str, page: str) -> str:
    return f"[{md_text(experiment)}]({link(page, experiment_page(experiment))})"


def gpu_text(env: Environment) -> str:
    g = env.gpu
    name = g.model or (f"{g.architecture} (model not stated)" if g.architecture else NOT_STATED)
    return f"{g.count}× {name}" if g.count else name


def _peak(record: Record, field: str) -> str:
    figures = [getattr(lv, field) for lv in record.levels if getattr(lv, field) is not None]
    if not figures:
        return "—"
    best = max(figures, key=lambda m: m.headline())
    return fmt_metric(best)


def records_table(
    records: Sequence[LoadedRecord], page: str, *, columns: str = "full", git: GitInfo | None = None
) -> str:
    """Records, newest first. ``columns``: "full" (records index), "short" (home, experiment pages).

    With ``git`` holding provenance, a column names the commit that added each record (or "uncommitted")."""
    with_git = git is not None and git.available
    rows = []
    for loaded in sorted(records, key=lambda r: (r.record.created_at, r.record.id), reverse=True):
        r = loaded.record
        base = [
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            record_link(r, page, text=r.title or r.id),
            experiment_link(r.experiment, page),
            md_text(r.variant),
            md_text(r.provenance.kind),
            md_text(r.status.state),
        ]
        if columns == "full":
            engine = r.server.engine + (f" {r.server.version}" if r.server.version else "")
            base += [
                md_text(engine),
                md_text(gpu_text(r.environment)),
                str(len(r.levels)),
                _peak(r, "output_throughput"),
                _peak(r, "total_throughput"),
            ]
        if with_git and git is not None:
            base.append(commit_markdown(git.of(r.id), git.repository_url, with_author=columns == "full"))
        rows.append(base)
    header = ["Date (UTC)", "Record", "Experiment", "Variant", "Kind", "Status"]
    if columns == "full":
        header += ["Engine", "GPU", "Levels", "Peak output tok/s", "Peak total tok/s"]
    if with_git:
        header.append("Added in commit")
    return md_table(header, rows) if rows else "*No records yet.*"


def fact(v: Any) -> str:
    """A stated fact as escaped Markdown; ``None`` reads "not stated", booleans "yes"/"no"."""
    if v is None:
        return NOT_STATED
    if isinstance(v, bool):
        return "yes" if v else "no"
    return md_text(v)


def environment_rows(env: Environment, *, claimed: Callable[[str], str] | None = None) -> list[tuple[str, str]]:
    """Label and value of each environment fact; ``claimed(dotted field)`` returns a mark for a claimed value."""
    mark = claimed or (lambda _field: "")
    g = env.gpu
    rows: list[tuple[str, str]] = [
        ("GPU", md_text(gpu_text(env))),
        ("GPU architecture", fact(g.architecture)),
        ("GPU driver", fact(g.driver)),
        ("GPU memory (MiB)", fact(g.memory_mib)),
        ("GPU power limit (W)", fact(g.power_limit_w)),
        ("CUDA runtime", fact(env.cuda_runtime)),
        ("NCCL version", fact(env.nccl_version)),
    ]
    rows += [(md_text(f"clock: {k}"), fact(v)) for k, v in sorted(g.clocks.items())]
    rows += [(md_code(k), fact(v)) for k, v in sorted(env.env_vars.items())]
    if not any(k.startswith("NCCL_") for k in env.env_vars):
        rows.append((md_text("NCCL_* variables"), NOT_STATED))
    rows += [(md_text(f"{k} version"), fact(v)) for k, v in sorted(env.versions.items())]
    rows += [
        (md_text(FEATURE_LABELS.get(k, k.replace("_", " "))), fact(v) + mark(f"environment.features.{k}"))
        for k, v in sorted(env.features.items())
    ]
    rows += [(md_text(f"info: {k}"), fact(v)) for k, v in sorted(env.info.items())]
    return rows


def environment_table(records: Sequence[Record], page: str) -> str:
    """Environment facts side by side, one column per record (``not stated`` where a record is silent)."""
    if not records:
        return "*No records.*"
    per = [dict(environment_rows(r.environment)) for r in records]
    keys: list[str] = []
    for rows in per:
        keys += [k for k in rows if k not in keys]
    header = ["Environment", *(record_link(r, page, text=r.variant) for r in records)]
    body = [[k, *(rows.get(k, NOT_STATED) for rows in per)] for k in keys]
    return md_table(header, body)


def chart_figure(chart: Chart, caption: str = "") -> str:
    """A chart as a raw-HTML ``<figure>`` block (inline SVG, no script)."""
    cap = f"<figcaption>{html_text(caption)}</figcaption>" if caption else ""
    head = f'<figure class="bench-figure" id="{html_attr(chart.id)}" data-search-exclude>'
    return f"{head}\n{render_svg(chart)}\n{cap}</figure>\n"


def dead_ends_list(dead_ends: Sequence[DeadEnd], page: str) -> str:
    if not dead_ends:
        return "*No dead ends recorded.*"
    lines = []
    for d in dead_ends:
        m = d.meta
        lines.append(
            f"- **[{md_text(d.title)}]({link(page, d.path)})** ({m.date.isoformat()}, {md_text(m.status)}): "
            f"{md_text(m.decision)}"
        )
    return "\n".join(lines)


def related_records(ids: Sequence[str], site: SiteData, page: str) -> str:
    parts = []
    for rid in ids:
        loaded = site.by_id.get(rid)
        if loaded is not None:
            parts.append(record_link(loaded.record, page))
        else:
            parts.append(f"{md_code(rid)} (not in the records of this build)")
    return ", ".join(parts) if parts else "none"


def dead_end_summary(dead_end: DeadEnd, site: SiteData, page: str) -> str:
    """The box at the top of a dead-end page, rendered from its front matter."""
    m = dead_end.meta
    lines = [
        f"**Date:** {m.date.isoformat()} · **Status:** {md_text(m.status)} · "
        f"**Experiment:** {experiment_link(m.experiment, page)}",
        "",
        f"**Decision:** {md_text(m.decision)}",
        "",
        f"**Related records:** {related_records(m.related_records, site, page)}",
    ]
    if m.error_signature:
        lines += ["", f"**Error signature:** {md_code(m.error_signature)}"]
    return admonition("abstract", f"Dead end: {md_text(m.status)}", "\n".join(lines))
