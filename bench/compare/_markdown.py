"""The one Markdown renderer of a comparison and of an environment diff (pure).

``bench compare --format md``, the site (pages and shortcodes) and the PR report all render a comparison here; they
differ only in their :class:`MarkdownStyle`: how text is escaped for the medium, how a box and a fold are written
(a Material admonition on the site, ``<details>`` on GitHub), how a record is named (a link on the site).

A comparison reads top down: what its context says (not comparable, or cross-context), the verdict, a compact
table (levels as rows; per speed figure both values and the ratio with its interval, decided ones strong, the rest
muted), whatever the caller puts after it (the site's ratio chart and downloads), then a fold with the long form:
every figure at every level, what the verdict left out, notes, and the compared records.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.figures import SPEED, figure
from bench.md_table import md_table

from ._envdiff import FieldDiff
from ._evidence import floor_text
from ._result import NOT_STATED, Comparison, MetricComparison
from ._rows import comparison_rows, figure_heading, level_cell, long_cells, long_header, shown_value, value_text

__all__ = [
    "PLAIN",
    "MarkdownStyle",
    "compact_figures",
    "comparison_notes",
    "render_comparison_markdown",
    "render_diff_markdown",
    "render_verdict_markdown",
]


def _plain_text(text: object) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().replace("\\", "\\\\").replace("|", "\\|")


def _plain_code(text: object) -> str:
    flat = _plain_text(text)
    fence = "`" * (max((len(m) for m in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence}{flat}{fence}"


def _plain_box(kind: str, title: str, body: str) -> str:
    return f"**{title}**\n\n{body}\n"


def _html_fold(title: str, body: str) -> str:
    """A ``<details>`` fold; ``title`` is the renderer's own words (it is HTML-escaped, never Markdown)."""
    return f"<details><summary>{html.escape(title)}</summary>\n\n{body}\n\n</details>\n"


@dataclass(frozen=True)
class MarkdownStyle:
    """How a medium writes the parts of a comparison. ``text`` escapes any string (record text and the renderer's
    words alike); ``sentence`` a sentence such as the verdict; ``box(kind, title, body)`` a titled block (kind:
    ``abstract``, ``warning``, ``failure``, ``note``); ``fold(title, body)`` a collapsed block; ``muted`` and
    ``strong`` mark a cell."""

    text: Callable[[object], str] = _plain_text
    sentence: Callable[[object], str] = _plain_text
    code: Callable[[object], str] = _plain_code
    record: Callable[[str], str] = _plain_code
    box: Callable[[str, str, str], str] = _plain_box
    fold: Callable[[str, str], str] = _html_fold
    muted: Callable[[str], str] = lambda s: f"_{s}_"
    strong: Callable[[str], str] = lambda s: f"**{s}**"


PLAIN = MarkdownStyle()
"""CommonMark for a terminal or a file (``bench compare --format md``)."""


# ---------------------------------------------------------------- context and verdict


def _context_box(c: Comparison, s: MarkdownStyle) -> str:
    """Each context field that differs beyond the treatment, with both values, and what follows."""
    if not c.warnings:
        return ""

    def show(v: object) -> str:
        return f"*{NOT_STATED}*" if v is None else s.code(v)

    a, b = s.text(c.label_a), s.text(c.label_b)
    items = "\n".join(f"- {s.code(w.field)}: {a} {show(w.a)}, {b} {show(w.b)}" for w in c.warnings)
    treatment = ", ".join(s.code(t) for t in c.treatment) or "nothing"
    differ = f"These records differ in {len(c.warnings)} context field(s) beyond the declared treatment ({treatment}):"
    flag, file, command = (
        s.code("cross_context: true"),
        s.code("benchbook.yaml"),
        s.code("bench compare --cross-context"),
    )
    if c.cross_context:
        after = (
            f"A cross-context comparison was forced ({flag} for this experiment in {file}, or {command}): the ratios "
            "below mix the treatment with these differences."
        )
        return s.box("warning", "Cross-context comparison (forced)", "\n\n".join([differ, items, after]))
    after = (
        "The pair is not comparable, so there is no verdict: the figures below are shown side by side only. "
        f"To compare anyway, set {flag} for the experiment in {file} (or run {command}); the comparison is then "
        "labelled cross-context wherever it appears."
    )
    return s.box("failure", "Not comparable: the context differs", "\n\n".join([differ, items, after]))


def _verdict_box(c: Comparison, s: MarkdownStyle) -> str:
    tag = " (cross-context)" if c.cross_context else ""
    title = f"Verdict{tag}: {s.text(c.label_b)} compared with {s.text(c.label_a)}"
    return s.box("abstract", title, s.sentence(c.verdict))


def render_verdict_markdown(c: Comparison, style: MarkdownStyle = PLAIN) -> str:
    """The context box (when the context differs), then the computed verdict in a box."""
    return _context_box(c, style) + _verdict_box(c, style)


# ---------------------------------------------------------------- the compact table


def compact_figures(c: Comparison, figures: Sequence[str] | None = None) -> list[str]:
    """The figures of the compact table: ``figures`` (those compared), else the speed figures compared at any level."""
    wanted = list(figures) if figures is not None else list(SPEED)
    present = {m.metric for lv in c.levels for m in lv.metrics if m.ratio.value is not None or figures is not None}
    return [k for k in wanted if k in present]


def _compact_cells(m: MetricComparison | None, s: MarkdownStyle) -> list[str]:
    if m is None:
        return ["—", "—"]
    values = f"{value_text(m.a, m.approximate)} / {value_text(m.b, m.approximate)}"
    if m.ratio.value is None:
        return [s.text(values), "—"]
    ratio = f"{m.ratio.value:.2f}×"
    if m.ratio.lo is not None and m.ratio.hi is not None:
        ratio += f" ({m.ratio.lo:.2f}–{m.ratio.hi:.2f})"
    cell = s.text(ratio)
    if m.evidence == "decided":
        cell = s.strong(cell)
    elif m.evidence != "no_difference":
        cell = s.muted(cell)
    return [s.text(values), cell]


def _compact_table(c: Comparison, s: MarkdownStyle, keys: Sequence[str]) -> str:
    if not keys:
        return ""
    heads = []
    for key in keys:
        heads += [s.text(figure_heading(figure(key))), s.text(f"ratio ({c.confidence:.0%} interval)")]
    rows = []
    for lv in c.levels:
        cells = [s.text(level_cell(lv))]
        for key in keys:
            m = lv.metric(key)
            cells += ["—", "—"] if lv.failed else _compact_cells(m, s)
        rows.append(cells)
    a, b = s.text(c.label_a), s.text(c.label_b)
    legend = (
        f"Each figure: {a} / {b}, then the ratio {b} / {a} with its {c.confidence:.0%} interval. "
        f"{s.strong('Strong')}: the interval lies beyond the {floor_text(c.noise_floor)} noise floor (a side is "
        f"faster); plain: no difference shown; {s.muted('muted')}: not resolved, or no interval (indicative)."
    )
    return legend + "\n\n" + md_table(["Level", *heads], rows, align="l" + "rr" * len(keys))


# ---------------------------------------------------------------- the long form


def _long_table(c: Comparison, s: MarkdownStyle, figures: Sequence[str] | None) -> str:
    rows = [[s.text(cell) for cell in long_cells(r)] for r in comparison_rows(c, figures)]
    if not rows:
        return "*The two records state no figure at a level they share, so there is nothing to compare.*"
    return md_table([s.text(h) for h in long_header(c)], rows, align="llrrrrr")


def comparison_notes(c: Comparison) -> list[str]:
    """The comparison's own notes, the levels only one side states, and how the intervals were made."""
    notes = [
        "↑ higher is better, ↓ lower is better; requests: what each figure rests on "
        f"({c.label_a} / {c.label_b}; — not stated)",
        *c.notes,
    ]
    if c.only_in_a:
        notes.append(f"levels only {c.label_a} states: {', '.join(c.only_in_a)}")
    if c.only_in_b:
        notes.append(f"levels only {c.label_b} states: {', '.join(c.only_in_b)}")
    if c.estimate != "point":
        notes.append(
            f"intervals: percentile bootstrap, {c.n_boot} resamples, seed {c.seed} "
            "(requests within a run; runs, then requests, when a side has several runs; runs alone when they "
            "hold no per-request samples)"
        )
    notes.append(
        f"evidence: a side is faster only where the interval lies beyond the {floor_text(c.noise_floor)} noise floor; "
        f"inside it: no difference shown; no interval: indicative; fewer than {c.min_requests} requests per side "
        "(pooled over runs): no verdict"
    )
    return notes


def _bullets(title: str, items: Sequence[str]) -> list[str]:
    """A titled list; nothing without items or without a title."""
    return [f"{title}:", "", *(f"- {item}" for item in items), ""] if items and title else []


def _details(c: Comparison, s: MarkdownStyle, info: bool, records: bool = True) -> str:
    lines = _bullets("Left out of the verdict", [s.text(f"{e.name or e.key}: {e.reason}") for e in c.excluded])
    lines += _bullets("Notes", [s.text(n) for n in comparison_notes(c)])
    if info:
        diffs = [s.text(f"{d.field}: {shown_value(d.a)} vs {shown_value(d.b)}") for d in c.info_differences]
        lines += _bullets("Info differences (shown, not splitting)", diffs)
    lines += _bullets(
        "Compared records" if records else "",
        [
            f"{s.text(label)}: {', '.join(s.record(i) for i in ids)} (fingerprint {s.code(fp)})"
            for label, ids, fp in ((c.label_a, c.ids_a, c.fingerprint_a), (c.label_b, c.ids_b, c.fingerprint_b))
        ]
        + [f"treatment: {', '.join(s.code(t) for t in c.treatment) or 'nothing'}"],
    )
    return "\n".join(lines).rstrip()


def render_comparison_markdown(
    c: Comparison,
    style: MarkdownStyle = PLAIN,
    *,
    figures: Sequence[str] | None = None,
    after_table: str = "",
    verdict: bool = True,
    long_form: bool = True,
    info: bool = True,
    records: bool = True,
) -> str:
    """The whole comparison (see the module docstring). ``figures``: only these figure keys (compact table and long
    form); ``after_table``: Markdown placed after the compact table; ``verdict=False`` leaves the verdict box out
    (the PR report states the verdict above; the context box stays); ``long_form=False`` gives the notes without the
    long table and unfolded; ``info=False`` leaves the info differences out, ``records=False`` the list of the
    compared records (the PR report names them itself)."""
    parts = [_context_box(c, style)] if c.warnings else []
    if verdict:
        parts.append(_verdict_box(c, style))
    compact = _compact_table(c, style, compact_figures(c, figures))
    if compact:
        parts.append(compact + "\n")
    if after_table:
        parts.append(after_table)
    details = _details(c, style, info, records)
    if long_form:
        parts.append(style.fold("All figures, level by level", _long_table(c, style, figures) + "\n\n" + details))
    else:
        parts.append(details + "\n")
    return "\n".join(parts)


# ---------------------------------------------------------------- environment diff

MAX_VALUE = 300  # characters of a value shown in a diff cell (a whole launch command can be long)
CLAIMED = "*(claimed)*"
"""The mark next to a value that only the run config states (the server did not report it)."""


def _diff_value(v: Any, claimed: bool, s: MarkdownStyle) -> str:
    if v is None:
        text = f"*{NOT_STATED}*"
    else:
        raw = shown_value(v)
        text = s.text(raw if len(raw) <= MAX_VALUE else raw[: MAX_VALUE - 1] + "…")
    return text + (f" {CLAIMED}" if claimed else "")


def render_diff_markdown(
    rows: Sequence[FieldDiff], label_a: str = "a", label_b: str = "b", style: MarkdownStyle = PLAIN
) -> str:
    """Field | role | a | b for each differing field (context first), after a line that counts them; one line
    when nothing differs."""
    if not rows:
        return "*The two records do not differ in any field (levels, ids and timestamps aside).*\n"
    body = [
        [
            style.code(d.field),
            "**context**" if d.role == "context" else "info",
            _diff_value(d.a, d.claimed_a, style),
            _diff_value(d.b, d.claimed_b, style),
        ]
        for d in rows
    ]
    n_ctx = sum(d.role == "context" for d in rows)
    summary = (
        f"{len(rows)} field(s) differ, {n_ctx} of them context (a context difference splits a comparison; "
        "info is shown only)."
    )
    if any(d.claimed_a or d.claimed_b for d in rows):
        summary += f" A value marked {CLAIMED} is only the run config's statement: the server did not report it."
    header = ["Field", "Role", style.text(label_a), style.text(label_b)]
    return summary + "\n\n" + md_table(header, body) + "\n"
