"""What a record page shows beyond the record itself: git provenance, its configuration's history, and the
diff against the previous record of the same configuration. Computed from :class:`~bench.site.data.SiteData`."""

from __future__ import annotations

from bench.record.model import Record

from .blocks import record_link
from .data import SiteData
from .diff import diff_table
from .escape import md_code
from .gitinfo import commit_markdown, last_changed_line
from .history import history_link
from .paths import record_page
from .record_page import record_markdown

__all__ = ["previous_diff_section", "site_record_markdown"]


def previous_diff_section(site: SiteData, record: Record) -> str:
    page = record_page(record)
    prev = site.previous_in_configuration(record)
    head = "## Changes since the previous record of this configuration\n\n"
    if prev is None:
        return head + "First record of this configuration (same variant and context fingerprint): nothing to diff.\n"
    intro = (
        f"Every field in which {record_link(prev, page)} (the previous record of this configuration) "
        "and this record differ.\n\n"
    )
    return head + intro + diff_table(prev, record, "previous", "this record")


def site_record_markdown(site: SiteData, record: Record) -> str:
    page = record_page(record)
    rows: list[list[str]] = []
    if site.git.available:
        rows.append(["Added in commit", commit_markdown(site.git.of(record.id), site.git.repository_url)])
    key = site.configuration_of.get(record.id)
    if key is not None:
        rows.append(
            ["Configuration", f"fingerprint {md_code(site.fingerprint_of(record))}: {history_link(site, record, page)}"]
        )
    return record_markdown(
        record,
        summary_rows=rows,
        note=last_changed_line(site.git, [record.id]),
        sections=[previous_diff_section(site, record)],
    )
