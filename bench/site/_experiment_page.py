"""The experiment page and its parts (also used by shortcodes): comparisons, charts, environment diffs, history.

Every variant is shown by its latest record (with its repeats where it has some); each variant other than
the experiment's baseline variant (``benchbook.yaml``, else the one named ``baseline``) is compared with it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bench.compare import environment_diff, render_diff_markdown
from bench.figures import figure
from bench.md_table import md_table
from bench.record.model import Record

from ._chart_model import Chart
from ._comparisons import comparison_markdown, experiment_comparisons
from ._concurrency_charts import BandIntervals, concurrency_chart, percentile_chart
from ._dead_ends import dead_ends_list
from ._environment import environment_table
from ._escape import md_code, md_text
from ._failed_levels import experiment_failed_levels
from ._git_info import last_changed_line
from ._history_pages import configuration_status, thresholds_sentence
from ._markup import chart_figure, downloads_line
from ._paths import experiment_download, experiment_page, history_page, link
from ._records_table import records_table
from ._site_data import SiteData
from ._site_style import SITE_STYLE
from ._text_parts import TextParts
from ._tradeoff_chart import per_gpu, tradeoff_chart

__all__ = [
    "LATENCY_FIELDS",
    "experiment_charts",
    "experiment_comparisons_markdown",
    "experiment_diffs",
    "experiment_downloads",
    "experiment_markdown",
    "experiment_rows_line",
    "history_table",
    "percentile_figure",
    "tradeoff_figure",
]

# Latency distributions drawn as p50/p90/p99 against concurrency: field -> (label, axis title).
LATENCY_FIELDS: dict[str, tuple[str, str]] = {
    "ttft_ms": ("TTFT", "TTFT (ms)"),
    "tpot_ms": ("TPOT", "TPOT (ms)"),
}


def _runs_note(site: SiteData, records: list[Record]) -> str:
    repeated = [(r.variant, len(site.runs(r))) for r in records if len(site.runs(r)) > 1]
    if not repeated:
        return ""
    each = ", ".join(f"{v}: {n} runs" for v, n in repeated)
    return f" Variants with repeated runs ({each}) are drawn as the mean over runs, shaded with its interval."


def experiment_charts(site: SiteData, experiment: str, metric_key: str, *, chart_id: str | None = None) -> str:
    """One metric against concurrency, every variant overlaid (its latest record, with a band over repeats)."""
    spec = figure(metric_key)
    records = site.latest_per_variant(experiment)
    repeats = {r.variant: site.runs(r) for r in records}
    confidence = site.settings.comparison.confidence

    drawn: list[Chart] = []

    def draw(found: BandIntervals | None) -> BandIntervals:
        bands: BandIntervals = found if found is not None else {}
        drawn.append(
            concurrency_chart(
                [(r.variant, r, spec) for r in records],
                title=f"{spec.heading} vs concurrency — {experiment}",
                y_title=spec.title,
                chart_id=chart_id or f"chart-{experiment}-{metric_key}",
                repeats=repeats,
                confidence=confidence,
                intervals=bands,
            )
        )
        return bands

    if site.cache is None:
        draw(None)
    else:  # the bands' bootstrap is kept for the next build, keyed by every run drawn and the confidence
        parts = [f"{v}:" + ",".join(site.digest(r) for r in runs) for v, runs in repeats.items()]
        site.cache.intervals(site.cache.entry_key("bands", metric_key, repr(confidence), *parts), draw)
    chart = drawn[-1]
    if chart.empty:
        what = md_text(spec.label)
        return f"*No record of experiment {md_text(experiment)} states {what}, so there is no chart.*\n"
    variants = ", ".join(r.variant for r in records)
    caption = f"{spec.heading} against concurrency, latest record of each variant ({variants})."
    return chart_figure(chart, caption + _runs_note(site, records))


def tradeoff_figure(site: SiteData, experiment: str, *, chart_id: str | None = None) -> str:
    records = site.latest_per_variant(experiment)
    unit = "per GPU" if per_gpu(records) else "per server"
    chart = tradeoff_chart(
        [(r.variant, r) for r in records],
        title=f"Throughput {unit} vs per-request speed — {experiment}",
        chart_id=chart_id or f"chart-{experiment}-tradeoff",
    )
    if chart.empty:
        return (
            f"*No record of experiment {md_text(experiment)} states per-request tok/s and total throughput at the "
            "same concurrency, so there is no trade-off chart.*\n"
        )
    why = (
        "divided by each record's GPU count"
        if unit == "per GPU"
        else "not divided: a record does not state its GPU count"
    )
    caption = (
        f"The serving trade-off: total throughput {unit} ({why}) against per-request tok/s, one curve per variant "
        "(latest record), points labelled by concurrency. Up and to the right is better; ringed points form the "
        "Pareto front."
    )
    return chart_figure(chart, caption)


def percentile_figure(site: SiteData, experiment: str, field: str, *, chart_id: str | None = None) -> str:
    label, y_title = LATENCY_FIELDS[field]
    records = site.latest_per_variant(experiment)
    chart = percentile_chart(
        [(r.variant, r) for r in records],
        field,
        title=f"{label} p50 / p90 / p99 vs concurrency — {experiment}",
        y_title=y_title,
        chart_id=chart_id or f"chart-{experiment}-{field}",
    )
    if chart.empty:
        return f"*No record of experiment {md_text(experiment)} states {label} percentiles, so there is no chart.*\n"
    return chart_figure(chart, f"{label} percentiles against concurrency, latest record of each variant.")


def experiment_comparisons_markdown(site: SiteData, experiment: str, page: str, *, heading: str = "###") -> str:
    base, comparisons = experiment_comparisons(site, experiment)
    if base is None:
        return (
            f"*No baseline variant: `benchbook.yaml` names none for {md_text(experiment)} that has records here, and "
            "no variant is called `baseline`, so no comparison is computed.*\n"
        )
    if not comparisons:
        return f"*Only the baseline variant ({md_code(base.variant)}) has records, so there is nothing to compare.*\n"
    declared = experiment in site.settings.experiments
    source = "declared in `benchbook.yaml`" if declared else "by its name; `benchbook.yaml` does not declare one"
    parts = [
        f"Each variant is compared with {md_code(base.variant)} ({source}): latest records, with their repeated runs. "
        "Ratios, intervals, warnings and the verdict are computed by `bench.compare`, exactly as `bench compare` "
        "prints them.",
        "",
    ]
    for c in comparisons:
        parts += [f"{heading} {md_text(c.label_b)} vs {md_text(c.label_a)}", "", comparison_markdown(c, page, site)]
    return "\n".join(parts)


def experiment_diffs(site: SiteData, experiment: str) -> str:
    """Every field in which each variant's latest record differs from the baseline variant's latest record."""
    name = site.baseline_variant(experiment)
    latest = site.latest_per_variant(experiment)
    base = next((r for r in latest if r.variant == name), None)
    if base is None or len(latest) < 2:
        return "*No baseline variant with another variant to set against it.*\n"
    parts = []
    for r in latest:
        if r is base:
            continue
        parts += [
            f"### {md_text(base.variant)} → {md_text(r.variant)}",
            "",
            render_diff_markdown(environment_diff(base, r), base.variant, r.variant, SITE_STYLE),
        ]
    return "\n".join(parts)


def experiment_rows_line(experiment: str, page: str) -> str:
    """The download line of the experiment's rows (every record × level, as :func:`bench.frame` gives them)."""
    files = [("CSV", experiment_download(experiment, "csv")), ("JSON", experiment_download(experiment, "json"))]
    return downloads_line(page, f"every figure of {experiment}'s records, level by level", files)


def experiment_downloads(site: SiteData, experiment: str) -> Iterator[tuple[str, TextParts]]:
    """The experiment's frame rows as CSV and JSON: (docs-relative path, content)."""
    ids = [lr.record.id for lr in site.experiments.get(experiment, [])]
    yield experiment_download(experiment, "csv"), site.rows_download(ids, "csv")
    yield experiment_download(experiment, "json"), site.rows_download(ids, "json")


def history_table(site: SiteData, experiment: str, page: str) -> str:
    rows = []
    for key, recs in site.configurations.items():
        if not any(r.experiment == experiment for r in recs):
            continue
        variant, _, fp = key.rpartition("@")
        rows.append(
            [
                f"[{md_text(variant)} @ {fp}]({link(page, history_page(key))})",
                str(len(recs)),
                md_text(configuration_status(site.configuration_flags.get(key, []))),
            ]
        )
    return md_table(["Configuration", "Records", "Status"], rows) or "*No configurations yet.*"


def experiment_markdown(site: SiteData, experiment: str) -> str:
    page = experiment_page(experiment)
    loaded = site.experiments.get(experiment, [])
    latest = site.latest_per_variant(experiment)
    variants = ", ".join(r.variant for r in latest)
    declared = site.settings.experiments.get(experiment)
    parts = [f"# Experiment: {md_text(experiment)}", ""]
    if declared is not None:
        parts += [f"**{md_text(declared.title)}**", ""]
    parts += [
        f"{len(loaded)} record(s); variants: {md_text(variants) or 'none'}.",
        "",
        last_changed_line(site.git, [r.record.id for r in loaded]),
    ]
    failed = experiment_failed_levels([lr.record for lr in loaded], page)
    if failed:
        parts += ["", failed]
    if len(latest) > 1:
        parts += ["## Comparisons", "", experiment_comparisons_markdown(site, experiment, page), ""]
    if latest:
        charts = [
            experiment_charts(site, experiment, "total_throughput"),
            experiment_charts(site, experiment, "per_request_tok_s"),
            tradeoff_figure(site, experiment),
            percentile_figure(site, experiment, "ttft_ms"),
            percentile_figure(site, experiment, "tpot_ms"),
        ]
        parts += [
            "## Charts",
            "",
            "Every variant is overlaid (its latest record); older records have their own pages.",
            "",
            *charts,
        ]
    if len(latest) > 1:
        parts += ["## Environment differences", "", experiment_diffs(site, experiment), ""]
    parts += ["## Records", "", records_table(site, loaded, page, columns="short"), ""]
    history = history_table(site, experiment, page)
    if history:
        parts += ["## History", "", thresholds_sentence(site), "", history, "", experiment_rows_line(experiment, page)]
    if latest:
        parts += ["## Environment", "", environment_table(latest, page), ""]
    parts += ["## Dead ends", "", dead_ends_list(site.dead_ends_of(experiment), page), ""]
    return "\n".join(parts)
