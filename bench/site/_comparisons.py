"""Comparisons on the site: ``bench.compare`` computes and renders (in the site's style), this module picks the
records, adds the ratio chart and the downloads.

Each side of a comparison is a record and its repeats (same ``run_group``, variant and fingerprint), with the
settings of ``benchbook.yaml``. A comparison's rows are downloadable as CSV (``bench.compare.comparison_frame``) and
its whole JSON form as ``bench compare --format json`` prints it, beside its table.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from bench.compare import (
    Comparison,
    ComparisonRow,
    RatioIntervals,
    compact_figures,
    compare_records,
    comparison_rows,
    render_comparison_json,
    render_comparison_markdown,
    render_verdict_markdown,
    runs_of,
)
from bench.frame_text import table_csv
from bench.record.model import Record

from ._markup import chart_figure, downloads_line
from ._paths import comparison_download
from ._ratio_chart import ratio_chart
from ._site_data import SiteData
from ._site_style import SITE_STYLE, site_style

__all__ = [
    "comparison_downloads",
    "comparison_markdown",
    "experiment_comparison_downloads",
    "experiment_comparisons",
    "site_comparison",
    "verdict_markdown",
]


def site_comparison(site: SiteData, baseline: Record, candidate: Record) -> Comparison:
    """``compare_records`` over both records' runs, with the site's settings; computed once per pair and build, its
    bootstrap intervals kept in the site cache for the next build (keyed by both sides' records and the settings)."""
    key = (baseline.id, candidate.id)
    memo = site.comparisons
    if key in memo:
        return memo[key]
    a, b = site.runs(baseline), site.runs(candidate)
    if site.cache is None:
        memo[key] = compare_records(a, b, settings=site.settings, side_memo=site.side_memo)
        return memo[key]

    def compute(found: RatioIntervals | None) -> RatioIntervals:
        intervals: RatioIntervals = found if found is not None else {}
        memo[key] = compare_records(a, b, settings=site.settings, ratio_intervals=intervals, side_memo=site.side_memo)
        return intervals

    parts = [site.digest(r) for r in a] + ["vs"] + [site.digest(r) for r in b]
    site.cache.intervals(site.cache.entry_key("comparison", site.settings.model_dump_json(), *parts), compute)
    return memo[key]


def experiment_comparisons(site: SiteData, experiment: str) -> tuple[Record | None, list[Comparison]]:
    """The baseline variant's latest record and its comparison with each other variant's latest record."""
    name = site.baseline_variant(experiment)
    latest = site.latest_per_variant(experiment)
    base = next((r for r in latest if r.variant == name), None)
    if base is None:
        return None, []
    return base, [site_comparison(site, base, r) for r in latest if r.variant != base.variant]


def verdict_markdown(c: Comparison) -> str:
    """The computed verdict sentence in a box, after the context box when the context differs."""
    return render_verdict_markdown(c, SITE_STYLE)


COMPARISON_COLUMNS = tuple(ComparisonRow.__dataclass_fields__)


def _paths(c: Comparison, ext: str) -> str:
    return comparison_download(c.ids_a[0], c.ids_b[0], ext)


def comparison_downloads(c: Comparison) -> Iterator[tuple[str, str]]:
    """The comparison's download files as (docs-relative path, content): its rows as CSV, its JSON form."""
    rows = [tuple(getattr(r, name) for name in COMPARISON_COLUMNS) for r in comparison_rows(c)]
    yield _paths(c, "csv"), table_csv(rows, COMPARISON_COLUMNS)
    yield _paths(c, "json"), json.dumps(render_comparison_json(c), indent=2, ensure_ascii=False) + "\n"


def _computed_downloads(site: SiteData, experiment: str) -> dict[str, str]:
    return {path: text for c in experiment_comparisons(site, experiment)[1] for path, text in comparison_downloads(c)}


def experiment_comparison_downloads(site: SiteData, experiment: str) -> dict[str, str]:
    """The download files of the experiment's comparisons (:func:`experiment_comparisons`), path → content: kept in
    the site cache under a key of the records of each side (their repeats included) and the settings, so that a
    warm build neither compares again nor restores samples to write them."""
    if site.cache is None:
        return {
            path: text for c in experiment_comparisons(site, experiment)[1] for path, text in comparison_downloads(c)
        }
    name = site.baseline_variant(experiment)
    latest = site.latest_per_variant(experiment)
    base = next((r for r in latest if r.variant == name), None)
    if base is None:
        return {}
    pool = [lr.record for lr in site.experiments.get(experiment, [])]

    def digests(record: Record) -> str:
        return ",".join(site.digest(r) for r in runs_of(record, pool, fingerprint_of=site.fingerprint_of))

    sides = [f"{digests(base)} vs {digests(r)}" for r in latest if r.variant != base.variant]

    def compute(found: dict[str, str] | None) -> dict[str, str]:
        if found is not None:
            return found
        return {
            path: text for c in experiment_comparisons(site, experiment)[1] for path, text in comparison_downloads(c)
        }

    key = site.cache.entry_key("comparison-downloads", site.settings.model_dump_json(), *sides)
    files: dict[str, str] = site.cache.intervals(key, compute)
    return files


def comparison_markdown(c: Comparison, page: str, site: SiteData, metrics: Sequence[str] | None = None) -> str:
    """Context and verdict, the compact table, the ratio chart and the downloads, then the long form in a fold."""
    keys = compact_figures(c, metrics)
    chart = ratio_chart(c, keys, chart_id=f"chart-{c.ids_a[0]}-{c.ids_b[0]}") if keys else None
    after = chart_figure(chart) if chart is not None and not chart.empty else ""
    files = [("rows as CSV", _paths(c, "csv")), ("comparison as JSON", _paths(c, "json"))]
    after += downloads_line(page, "this comparison", files)
    style = site_style(site.by_id, page)
    return render_comparison_markdown(c, style, figures=metrics, after_table=after, info=False) + "\n"
