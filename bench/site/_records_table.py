"""The table of records (pure): newest first, with their experiment, variant, kind and status, and on the records
index their engine, GPU, levels and peak throughputs (the largest of the record's rows of
:func:`bench.dataframe.frame`), and the commit that added each record when git says."""

from __future__ import annotations

from collections.abc import Sequence

from bench.figures import format_figure
from bench.md_table import md_table
from bench.record.load import LoadedRecord

from ._environment import gpu_text
from ._escape import md_text
from ._git_info import commit_markdown
from ._paths import experiment_link, record_link
from ._site_data import SiteData

__all__ = ["records_table"]

PEAKS = (("Peak output tok/s", "output_throughput"), ("Peak total tok/s", "total_throughput"))


def _peak(site: SiteData, record_id: str, key: str) -> str:
    found = [(v, bool(approx)) for v, approx in site.cells_of([record_id], (key, f"{key}_approx")) if v is not None]
    if not found:
        return "—"
    value, approximate = max(found)
    return format_figure(value, approximate=approximate)


def records_table(
    site: SiteData, records: Sequence[LoadedRecord], page: str, *, columns: str = "full", with_git: bool = True
) -> str:
    """Records, newest first. ``columns``: "full" (records index), "short" (home, experiment pages).

    With git provenance (and ``with_git``), a column names the commit that added each record (or "uncommitted")."""
    git = site.git
    show_git = with_git and git.available
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
            base += [md_text(engine), md_text(gpu_text(r.environment)), str(len(r.levels))]
            base += [_peak(site, r.id, key) for _, key in PEAKS]
        if show_git:
            base.append(commit_markdown(git.of(r.id), git.repository_url, with_author=columns == "full"))
        rows.append(base)
    header = ["Date (UTC)", "Record", "Experiment", "Variant", "Kind", "Status"]
    if columns == "full":
        header += ["Engine", "GPU", "Levels", *(name for name, _ in PEAKS)]
    if show_git:
        header.append("Added in commit")
    return md_table(header, rows) if rows else "*No records yet.*"
