"""Comparisons on the site: ``bench.compare`` computes, this module only lays its result out as Markdown.

Ratios, confidence intervals, comparability warnings, left-out levels and the verdict sentence all come from
:func:`bench.compare.compare_records` (one source of truth, also behind ``bench compare`` and the PR gate).
Each side of a comparison is a record and its repeats (same ``run_group``, variant and fingerprint), with the
settings of ``benchbook.yaml``. Text from records is escaped here, as everywhere on the site.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.compare import Comparison, MetricComparison, compare_records
from bench.compare.metrics import METRICS
from bench.compare.render import comparison_notes
from bench.compare.verdict import fmt_figure
from bench.record.model import Record

from .blocks import admonition, record_link
from .data import SiteData
from .escape import md_code, md_inline, md_text
from .tables import md_table

__all__ = [
    "COMPARED_METRICS",
    "comparison_markdown",
    "comparison_table",
    "comparison_warnings",
    "experiment_comparisons",
    "site_comparison",
    "verdict_markdown",
]

# The metrics bench.compare compares, by name (the ``metrics=`` argument of the shortcodes picks among them).
COMPARED_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS)
NO_INTERVAL = "point estimate, no interval (indicative)"
EVIDENCE_MARK = {"decided": "", "no_difference": " (no difference shown)", "unresolved": " (not resolved)"}


def site_comparison(site: SiteData, baseline: Record, candidate: Record) -> Comparison:
    """``compare_records`` over both records' runs, with the site's settings; computed once per pair and build."""
    key = (baseline.id, candidate.id)
    memo = site.comparisons
    if key not in memo:
        memo[key] = compare_records(site.runs(baseline), site.runs(candidate), settings=site.settings)
    return memo[key]


def experiment_comparisons(site: SiteData, experiment: str) -> tuple[Record | None, list[Comparison]]:
    """The baseline variant's latest record and its comparison with each other variant's latest record."""
    name = site.baseline_variant(experiment)
    latest = site.latest_per_variant(experiment)
    base = next((r for r in latest if r.variant == name), None)
    if base is None:
        return None, []
    return base, [site_comparison(site, base, r) for r in latest if r.variant != base.variant]


def _ratio(m: MetricComparison) -> str:
    if m.ratio.value is None:
        return "—"
    return ("≈" if m.approximate else "") + f"{m.ratio.value:.2f}×"


def _interval(m: MetricComparison) -> str:
    r = m.ratio
    if r.lo is not None and r.hi is not None:
        return f"{r.lo:.2f}–{r.hi:.2f}" + EVIDENCE_MARK.get(m.evidence, "")
    if r.value is None:
        return md_text(m.note) if m.note else "—"
    return NO_INTERVAL


def _requests(m: MetricComparison) -> str:
    def one(n: int | None, runs: int) -> str:
        return ("—" if n is None else f"{n:,}") + (f" ({runs} runs)" if runs > 1 else "")

    return f"{one(m.ratio.n_a, m.ratio.runs_a)} / {one(m.ratio.n_b, m.ratio.runs_b)}"


def comparison_table(c: Comparison, metrics: Sequence[str] | None = None) -> str:
    """One row per level and compared figure: both figures, the ratio candidate / baseline and its interval."""
    a, b = md_text(c.label_a), md_text(c.label_b)
    header = ["Level", "Figure", "Better", a, b, f"{b} / {a}", f"{c.confidence:.0%} interval", "Requests"]
    rows = []
    for lv in c.levels:
        level = md_text(lv.name) + (" (failed)" if lv.failed else " (left out)" if lv.excluded else "")
        if lv.failed:
            rows.append([level, "*failed: no figure compared*", "", "—", "—", "—", "—", "—"])
        for m in lv.metrics:
            if metrics is not None and m.metric not in metrics:
                continue
            rows.append(
                [
                    level,
                    md_text(f"{m.label} ({m.unit})" if m.unit not in m.label else m.label),
                    "neither (workload)" if m.neutral else "higher" if m.higher_is_better else "lower",
                    fmt_figure(m.a, m.approximate) if m.a is not None else "—",
                    fmt_figure(m.b, m.approximate) if m.b is not None else "—",
                    _ratio(m),
                    _interval(m),
                    _requests(m),
                ]
            )
    if not rows:
        return "*The two records state no figure at a level they share, so there is nothing to compare.*"
    return md_table(header, rows, align="lllrrrrr")


def comparison_warnings(c: Comparison) -> str:
    """The context box, shown before anything else: each context field that differs beyond the treatment, with
    both values, and what follows (no verdict; or a forced cross-context comparison)."""
    if not c.warnings:
        return ""

    def show(v: object) -> str:
        return "*not stated*" if v is None else md_code(v)

    a, b = md_text(c.label_a), md_text(c.label_b)
    items = [f"- {md_code(w.field)}: {a} {show(w.a)}, {b} {show(w.b)}" for w in c.warnings]
    treatment = ", ".join(md_code(t) for t in c.treatment) or "nothing"
    differ = f"These records differ in {len(c.warnings)} context field(s) beyond the declared treatment ({treatment}):"
    if c.cross_context:
        after = (
            "A cross-context comparison was forced (`cross_context: true` for this experiment in `benchbook.yaml`, "
            "or `bench compare --cross-context`): the ratios below mix the treatment with these differences."
        )
        return admonition(
            "warning", "Cross-context comparison (forced)", "\n\n".join([differ, "\n".join(items), after])
        )
    after = (
        "The pair is not comparable, so there is no verdict: the figures below are shown side by side only. "
        "To compare anyway, set `cross_context: true` for the experiment in `benchbook.yaml` (or run "
        "`bench compare --cross-context`); the comparison is then labelled cross-context wherever it appears."
    )
    return admonition("failure", "Not comparable: the context differs", "\n\n".join([differ, "\n".join(items), after]))


def verdict_markdown(c: Comparison) -> str:
    """The computed verdict sentence in a box, after the context box when the context differs."""
    tag = " (cross-context)" if c.cross_context else ""
    title = f"Verdict{tag}: {md_text(c.label_b)} compared with {md_text(c.label_a)}"
    return comparison_warnings(c) + admonition("abstract", title, md_inline(c.verdict))


def _details(c: Comparison, page: str, site: SiteData) -> str:
    lines = []
    names = {lv.key: lv.name for lv in c.levels}
    if c.excluded:
        lines += ["Left out of the verdict:", ""]
        lines += [f"- {md_text(e.name or names.get(e.key, e.key))}: {md_text(e.reason)}" for e in c.excluded]
        lines.append("")
    notes = comparison_notes(c)
    if notes:
        lines += ["Notes:", "", *(f"- {md_text(n)}" for n in notes), ""]

    def ids(record_ids: Sequence[str]) -> str:
        out = []
        for rid in record_ids:
            lr = site.by_id.get(rid)
            out.append(record_link(lr.record, page) if lr else md_code(rid))
        return ", ".join(out)

    lines += [
        "Compared records:",
        "",
        f"- {md_text(c.label_a)}: {ids(c.ids_a)} (fingerprint {md_code(c.fingerprint_a)})",
        f"- {md_text(c.label_b)}: {ids(c.ids_b)} (fingerprint {md_code(c.fingerprint_b)})",
    ]
    return "\n".join(lines)


def comparison_markdown(c: Comparison, page: str, site: SiteData, metrics: Sequence[str] | None = None) -> str:
    """Verdict, warnings, the table and what the verdict left out (everything computed by bench.compare)."""
    return "\n".join(
        [
            verdict_markdown(c),
            comparison_table(c, metrics),
            "",
            _details(c, page, site),
            "",
        ]
    )
