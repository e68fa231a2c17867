"""How the site writes what ``bench.compare`` renders (:class:`bench.compare.MarkdownStyle`): record text escaped by
:mod:`bench.site._escape`, boxes as Material admonitions, folds as collapsed ones, unresolved cells muted by the
site's stylesheet, records linked to their pages."""

from __future__ import annotations

from collections.abc import Mapping

from bench.compare import MarkdownStyle
from bench.record.load import LoadedRecord

from ._escape import md_code, md_inline, md_text
from ._markup import admonition
from ._paths import record_link

__all__ = ["SITE_STYLE", "site_style"]


def _box(kind: str, title: str, body: str) -> str:
    return admonition(kind, title, body)


def _fold(title: str, body: str) -> str:
    return admonition("note", md_text(title), body, collapsible=True)


def _muted(cell: str) -> str:
    return f'<span class="bench-muted">{cell}</span>'


SITE_STYLE = MarkdownStyle(
    text=md_text, sentence=md_inline, code=md_code, record=md_code, box=_box, fold=_fold, muted=_muted
)
"""The site's style where records are not linked."""


def site_style(by_id: Mapping[str, LoadedRecord], page: str) -> MarkdownStyle:
    """The site's style on ``page``: a record id this build holds links to its page."""

    def record(rid: str) -> str:
        loaded = by_id.get(rid)
        return record_link(loaded.record, page) if loaded is not None else md_code(rid)

    return MarkdownStyle(
        text=md_text, sentence=md_inline, code=md_code, record=record, box=_box, fold=_fold, muted=_muted
    )
