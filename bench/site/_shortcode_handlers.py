"""The handler of each shortcode (pure): a :class:`~bench.site._shortcode_call.Call` in, Markdown out. The syntax,
the list and the expansion are :mod:`bench.site._shortcodes`."""

from __future__ import annotations

from collections.abc import Callable

from bench.compare import Comparison, environment_diff, floor_text, render_context_table_markdown, render_diff_markdown
from bench.figures import COMPARED, FIGURES, figures_table_markdown, format_figure
from bench.md_table import md_table

from ._comparisons import comparison_markdown, site_comparison, verdict_markdown
from ._dead_ends import dead_ends_list
from ._environment import environment_table
from ._escape import md_text
from ._experiment_page import (
    LATENCY_FIELDS,
    experiment_charts,
    experiment_rows_line,
    history_table,
    percentile_figure,
    tradeoff_figure,
)
from ._history_pages import thresholds_sentence
from ._markup import errors_box
from ._records_table import records_table
from ._repeat_spread import repeat_spread_markdown
from ._shortcode_call import BadArgs, Call, missing, no_experiment, pair
from ._site_style import SITE_STYLE

__all__ = ["SHORTCODES"]


def _latest(c: Call) -> str:
    n = c.int("n", 10)
    newest = sorted(c.site.records, key=lambda r: (r.record.created_at, r.record.id), reverse=True)[:n]
    return records_table(c.site, newest, c.page, columns="short", with_git=False)


def _record_errors(c: Call) -> str:
    return errors_box(c.site.errors)


def _records(c: Call) -> str:
    exp = c.slug("experiment")
    return no_experiment(c, exp) or records_table(
        c.site, c.site.experiments[exp], c.page, columns="short", with_git=False
    )


def _comparison(c: Call) -> Comparison | str:
    found = pair(c)
    return found if isinstance(found, str) else site_comparison(c.site, *found)


def _compare(c: Call) -> str:
    metrics = None
    if "metrics" in c.args:
        metrics = [k for k in c.args["metrics"].split(",") if k]
        known = [f.key for f in COMPARED]
        bad = [k for k in metrics if k not in known]
        if bad or not metrics:
            raise BadArgs(f"metrics={c.args['metrics']!r}: each must be one of {', '.join(known)}")
    comp = _comparison(c)
    return comp if isinstance(comp, str) else comparison_markdown(comp, c.page, c.site, metrics)


def _verdict(c: Call) -> str:
    comp = _comparison(c)
    return comp if isinstance(comp, str) else verdict_markdown(comp)


def _diff(c: Call) -> str:
    found = pair(c)
    if isinstance(found, str):
        return found
    base, cand = found
    return render_diff_markdown(environment_diff(base, cand), base.variant, cand.variant, SITE_STYLE)


def _tradeoff(c: Call) -> str:
    exp = c.slug("experiment")
    return no_experiment(c, exp) or tradeoff_figure(c.site, exp)


def _percentiles(c: Call) -> str:
    exp = c.slug("experiment")
    field = c.args["metric"]
    if field not in LATENCY_FIELDS:
        raise BadArgs(f"metric={field!r} is not one of: {', '.join(LATENCY_FIELDS)}")
    return no_experiment(c, exp) or percentile_figure(c.site, exp, field)


def _history(c: Call) -> str:
    exp = c.slug("experiment")
    if (none := no_experiment(c, exp)) is not None:
        return none
    table = history_table(c.site, exp, c.page)
    return thresholds_sentence(c.site) + "\n\n" + table + "\n\n" + experiment_rows_line(exp, c.page)


def _context_table(c: Call) -> str:
    return render_context_table_markdown()


def _settings(c: Call) -> str:
    st = c.site.settings
    cs = st.comparison
    forced = [name for name, e in sorted(st.experiments.items()) if e.cross_context]
    rows = [
        [
            "`comparison.min_requests`",
            str(cs.min_requests),
            "fewer completed requests on a side at a level (pooled over its repeated runs): no verdict there",
        ],
        ["`comparison.confidence`", f"{cs.confidence:.0%}", "width of the bootstrap confidence intervals"],
        [
            "`comparison.noise_floor`",
            floor_text(cs.noise_floor),
            "an interval inside it: no difference shown; a side is faster only beyond it",
        ],
        [
            "`experiments.*.cross_context`",
            md_text(", ".join(forced)) if forced else "false for every experiment",
            "verdicts for pairs that differ in context, labelled cross-context",
        ],
        ["`regression.ratio_threshold`", f"{st.regression.ratio_threshold:.0%}", "a change beyond this counts"],
        ["`regression.window`", str(st.regression.window), "previous comparable records whose median is the baseline"],
        ["`regression.min_history`", str(st.regression.min_history), "fewer previous records: insufficient data"],
        ["`default_treatment`", md_text(", ".join(st.default_treatment)), "what variants are meant to differ in"],
    ]
    return md_table(["Setting", "Value in this build", "Meaning"], rows)


def _repeat_spread(c: Call) -> str:
    site = c.site
    return repeat_spread_markdown(site.repeat_spreads, site.settings.comparison.noise_floor)


def _chart(c: Call) -> str:
    exp = c.slug("experiment")
    key = c.args["metric"]
    if key not in {f.key for f in FIGURES}:
        raise BadArgs(f"metric={key!r} is not one of: {', '.join(f.key for f in FIGURES)}")
    return no_experiment(c, exp) or experiment_charts(c.site, exp, key)


def _environment(c: Call) -> str:
    exp = c.slug("experiment")
    return no_experiment(c, exp) or environment_table(c.site.latest_per_variant(exp), c.page)


def _dead_ends(c: Call) -> str:
    if "experiment" in c.args:
        return dead_ends_list(c.site.dead_ends_of(c.slug("experiment")), c.page)
    return dead_ends_list(c.site.dead_ends, c.page)


def _figures(c: Call) -> str:
    return figures_table_markdown()


def _frame_pivot(c: Call) -> str:
    """The notebook example's output: ``df.pivot_table(index="concurrency", columns="variant", values=K,
    aggfunc="median")`` over the experiment's rows of ``bench.frame``, computed here with pandas."""
    exp = c.slug("experiment")
    key = c.args["figure"]
    if key not in {f.key for f in FIGURES}:
        raise BadArgs(f"figure={key!r} is not one of: {', '.join(f.key for f in FIGURES)}")
    if (none := no_experiment(c, exp)) is not None:
        return none
    df = c.site.frame_of(lr.record.id for lr in c.site.experiments[exp])
    pivot = df.pivot_table(index="concurrency", columns="variant", values=key, aggfunc="median")
    if pivot.empty:
        return missing(f"No record of experiment '{exp}' states {key} at a concurrency.")
    rows = [
        [str(int(level)), *(format_figure(None if v != v else float(v)) for v in values)]
        for level, values in zip(pivot.index, pivot.to_numpy(), strict=True)
    ]
    header = ["concurrency", *(md_text(v) for v in pivot.columns)]
    return md_table(header, rows, align="r" * len(header))


# name -> (handler, required arguments, optional arguments)
SHORTCODES: dict[str, tuple[Callable[[Call], str], frozenset[str], frozenset[str]]] = {
    "latest": (_latest, frozenset(), frozenset({"n"})),
    "record-errors": (_record_errors, frozenset(), frozenset()),
    "records": (_records, frozenset({"experiment"}), frozenset()),
    "compare": (_compare, frozenset({"candidate"}), frozenset({"experiment", "baseline", "metrics"})),
    "verdict": (_verdict, frozenset({"candidate"}), frozenset({"experiment", "baseline"})),
    "diff": (_diff, frozenset({"candidate"}), frozenset({"experiment", "baseline"})),
    "chart": (_chart, frozenset({"experiment", "metric"}), frozenset()),
    "tradeoff": (_tradeoff, frozenset({"experiment"}), frozenset()),
    "percentiles": (_percentiles, frozenset({"experiment", "metric"}), frozenset()),
    "history": (_history, frozenset({"experiment"}), frozenset()),
    "context-table": (_context_table, frozenset(), frozenset()),
    "settings": (_settings, frozenset(), frozenset()),
    "repeat-spread": (_repeat_spread, frozenset(), frozenset()),
    "environment": (_environment, frozenset({"experiment"}), frozenset()),
    "dead-ends": (_dead_ends, frozenset(), frozenset({"experiment"})),
    "figures": (_figures, frozenset(), frozenset()),
    "frame-pivot": (_frame_pivot, frozenset({"experiment", "figure"}), frozenset()),
}
