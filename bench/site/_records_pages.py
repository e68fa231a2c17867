"""The records index when one page would be too long (pure).

Up to :data:`RECORDS_PER_PAGE` records, ``records/index.md`` lists them all in one sortable, filterable table. Past
that (a year of nightly runs is tens of thousands of records, and each row is about 400 bytes of HTML), the index
lists the experiments, and each experiment's records get their own list, ``records/<experiment>/index.md``, split
into parts of at most :data:`RECORDS_PER_PAGE` records (``index-2.md``, ...), newest first, so that no page grows past
about half a megabyte however many records there are.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.md_table import md_table
from bench.record.load import LoadedRecord

from ._escape import md_text
from ._git_info import last_changed_line
from ._markup import all_rows_line, errors_box, records_box
from ._paths import RECORDS_INDEX, link
from ._records_table import records_table
from ._site_data import SiteData

__all__ = [
    "RECORDS_PER_PAGE",
    "experiment_record_lists",
    "experiment_records_page",
    "sharded_records_index",
]

RECORDS_PER_PAGE = 1000


def experiment_records_page(experiment: str, part: int = 1) -> str:
    """The list of one experiment's records (part 1, 2, ...)."""
    return f"records/{experiment}/index.md" if part == 1 else f"records/{experiment}/index-{part}.md"


def _parts(records: Sequence[LoadedRecord], per_page: int) -> list[list[LoadedRecord]]:
    newest = sorted(records, key=lambda r: (r.record.created_at, r.record.id), reverse=True)
    return [newest[i : i + per_page] for i in range(0, len(newest), per_page)] or [[]]


def sharded_records_index(site: SiteData, per_page: int = RECORDS_PER_PAGE) -> str:
    """``records/index.md`` past ``per_page`` records: the experiments, each linking to its own list."""
    page = RECORDS_INDEX
    rows = []
    for exp, loaded in sorted(site.experiments.items()):
        latest = max(r.record.created_at for r in loaded)
        parts = _parts(loaded, per_page)
        rows.append(
            [
                f"[{md_text(exp)}]({link(page, experiment_records_page(exp))})",
                f"{len(loaded):,}",
                md_text(", ".join(sorted({r.record.variant for r in loaded}))),
                latest.strftime("%Y-%m-%d %H:%M UTC"),
                str(len(parts)),
            ]
        )
    table = md_table(["Experiment", "Records", "Variants", "Latest record", "Pages"], rows, align="lrllr")
    n = len(site.records)
    return "\n".join(
        [
            "# Records",
            "",
            errors_box(site.errors),
            f"{n:,} record(s) in {len(site.experiments)} experiment(s): more than one page holds "
            f"({per_page:,}), so each experiment lists its own records, newest first, in pages of at most "
            f"{per_page:,}.",
            "",
            last_changed_line(site.git, [r.record.id for r in site.records]),
            table,
            "",
            all_rows_line(page),
        ]
    )


def experiment_record_lists(site: SiteData, experiment: str, per_page: int = RECORDS_PER_PAGE) -> list[tuple[str, str]]:
    """One experiment's record lists (part 1, 2, ...) as (docs-relative path, Markdown), for a split index."""
    loaded = site.experiments.get(experiment, [])
    parts = _parts(loaded, per_page)
    out = []
    for i, part in enumerate(parts, start=1):
        page = experiment_records_page(experiment, i)
        nav = " · ".join(
            f"{j}" if j == i else f"[{j}]({link(page, experiment_records_page(experiment, j))})"
            for j in range(1, len(parts) + 1)
        )
        first, last = (i - 1) * per_page + 1, (i - 1) * per_page + len(part)
        out.append(
            (
                page,
                "\n".join(
                    [
                        f"# Records of {md_text(experiment)}",
                        "",
                        f"[Every experiment's records]({link(page, RECORDS_INDEX)}). Records {first:,}–{last:,} of "
                        f"{len(loaded):,}, newest first" + (f"; pages: {nav}." if len(parts) > 1 else "."),
                        "",
                        records_box(records_table(site, part, page, columns="full")),
                    ]
                ),
            )
        )
    return out
