"""Markdown and HTML building blocks every page uses (pure): an admonition, the box of files that failed to load, a
stated fact, a chart as a figure, a line of download links, a table that scrolls in its own box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._chart_model import Chart
from ._chart_svg import render_svg
from ._escape import html_attr, html_text, md_text
from ._format import NOT_STATED
from ._paths import all_rows_download, link

__all__ = [
    "admonition",
    "all_rows_line",
    "chart_figure",
    "downloads_line",
    "errors_box",
    "fact",
    "records_box",
    "scroll_box",
]


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


def fact(v: Any) -> str:
    """A stated fact as escaped Markdown; ``None`` reads "not stated", booleans "yes"/"no"."""
    if v is None:
        return NOT_STATED
    if isinstance(v, bool):
        return "yes" if v else "no"
    return md_text(v)


def chart_figure(chart: Chart, caption: str = "") -> str:
    """A chart as a raw-HTML ``<figure>`` block (inline SVG, no script)."""
    cap = f"<figcaption>{html_text(caption)}</figcaption>" if caption else ""
    head = f'<figure class="bench-figure" id="{html_attr(chart.id)}" data-search-exclude>'
    return f"{head}\n{render_svg(chart)}\n{cap}</figure>\n"


def downloads_line(page: str, what: str, files: Sequence[tuple[str, str]]) -> str:
    """``Download <what>: [CSV](…) · [JSON](…)``: (label, docs-relative path) pairs, linked from ``page``."""
    links = " · ".join(f"[{md_text(label)}]({link(page, path)})" for label, path in files)
    return f'<p class="bench-downloads" markdown>Download {md_text(what)}: {links}</p>\n'


def all_rows_line(page: str) -> str:
    """The download line of every record × level of the build."""
    files = [("CSV", all_rows_download("csv")), ("JSON", all_rows_download("json"))]
    return downloads_line(page, "every record's figures, level by level (bench.frame)", files)


SCROLL_BOX_OPEN = '<div class="bench-scroll" markdown>'
# the records' tables: the columns whose values the site's script offers as filters (docs/assets/js/bench-tables.js)
RECORDS_BOX_OPEN = '<div class="bench-records" data-filters="Experiment,Variant,Engine,GPU" markdown>'


def scroll_box(table: str) -> str:
    """A wide table in a box of its own that scrolls sideways, so it never overflows the content column."""
    return f"{SCROLL_BOX_OPEN}\n\n{table}\n\n</div>\n"


def records_box(table: str) -> str:
    """A table of records in the box the site's script makes sortable and filterable by experiment, variant, engine
    and GPU."""
    return f"{RECORDS_BOX_OPEN}\n\n{table}\n\n</div>\n"
