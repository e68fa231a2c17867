"""``bench compare`` and ``bench diff`` on a terminal (pure): rich tables rendered to plain text.

The comparison's rows and notes are those of every other renderer (``_rows.comparison_rows``,
``_markdown.comparison_notes``); only the layout is the terminal's.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from ._envdiff import FieldDiff
from ._markdown import comparison_notes
from ._result import Comparison
from ._rows import comparison_rows, long_cells, long_header, shown_value

__all__ = ["render_comparison_text", "render_diff_text"]


def _console_text(*renderables: Any, width: int) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False)
    for r in renderables:
        console.print(r)
    return buf.getvalue()


def _context(c: Comparison) -> list[str]:
    if not c.warnings:
        return []
    n = len(c.warnings)
    if c.cross_context:
        head = f"Cross-context comparison (forced): the records differ in {n} context field(s) beyond the treatment"
    else:
        head = (
            f"Not comparable: the records differ in {n} context field(s) beyond the treatment, so there is no verdict"
        )
    return [f"{head}:", *(f"  - {w.field}: {w.values}" for w in c.warnings), ""]


def _sections(c: Comparison) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    if c.excluded:
        out.append(("Left out of the verdict", [f"{e.name or e.key}: {e.reason}" for e in c.excluded]))
    out.append(("Notes", comparison_notes(c)))
    if c.info_differences:
        out.append(
            (
                "Info differences (shown, not splitting)",
                [f"{d.field}: {shown_value(d.a)} vs {shown_value(d.b)}" for d in c.info_differences],
            )
        )
    out.append(
        (
            "Records",
            [
                f"{c.label_a}: {', '.join(c.ids_a)} (fingerprint {c.fingerprint_a})",
                f"{c.label_b}: {', '.join(c.ids_b)} (fingerprint {c.fingerprint_b})",
                f"treatment: {', '.join(c.treatment)}",
            ],
        )
    )
    return out


def render_comparison_text(c: Comparison, *, width: int = 120) -> str:
    title = f"{c.label_b} compared with {c.label_a}" + (" (cross-context)" if c.cross_context else "")
    table = Table(*long_header(c), title=title)
    for r in comparison_rows(c):
        table.add_row(*long_cells(r))
    parts: list[Any] = [*_context(c), table, f"Verdict: {c.verdict}"]
    for heading, items in _sections(c):
        parts.append(f"\n{heading}:")
        parts += [f"  - {item}" for item in items]
    return _console_text(*parts, width=width)


def _claimed(flag: bool) -> str:
    return " (claimed)" if flag else ""


def render_diff_text(rows: Sequence[FieldDiff], label_a: str = "a", label_b: str = "b", *, width: int = 120) -> str:
    if not rows:
        return "The two records do not differ in any field (levels, ids and timestamps aside).\n"
    table = Table("field", "role", label_a, label_b, title=f"{len(rows)} differing field(s)")
    for d in rows:
        table.add_row(
            d.field, d.role, shown_value(d.a) + _claimed(d.claimed_a), shown_value(d.b) + _claimed(d.claimed_b)
        )
    return _console_text(table, width=width)
