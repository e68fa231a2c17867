"""Shortcodes in hand-written pages: ``<!-- bench:NAME key=value ... -->`` on a line of its own.

The comment is replaced by Markdown rendered from the records. An unknown name, an unknown or
missing argument, or a malformed value raises :class:`ShortcodeError` naming the page, so the build
fails loudly. Shortcodes inside fenced code blocks or inline code are left alone (so pages can show
the syntax); one anywhere else that does not stand alone on its line is an error too.

Values are bare words or double-quoted strings. ``V`` below is a variant (its latest record, with its
repeated runs) or a record id; ``baseline`` defaults to the experiment's baseline variant (``benchbook.yaml``,
else the variant named ``baseline``). Shortcodes:

``latest n=10``                      the newest records
``record-errors``                    the box listing records/dead ends that failed to load (empty if none)
``records experiment=E``             an experiment's records
``compare experiment=E candidate=V [baseline=V] [metrics=a,b]``
                                     the full comparison (bench.compare): verdict, warnings, table by level with
                                     ratios and intervals, left-out levels; metrics among
                                     bench.compare.metrics.METRICS (per_request_tok_s, total_throughput, ...)
``verdict experiment=E candidate=V [baseline=V]``
                                     the computed verdict sentence (and the warning box if not comparable)
``diff experiment=E candidate=V [baseline=V]``
                                     every field in which the two records differ (environment diff)
``chart experiment=E metric=M``      M against concurrency, every variant overlaid (band over repeated runs)
``tradeoff experiment=E``            total throughput per GPU vs per-request tok/s, Pareto front marked
``percentiles experiment=E metric=ttft_ms|tpot_ms``
                                     p50/p90/p99 against concurrency, every variant
``history experiment=E``             the experiment's configurations, their history pages and flags
``environment experiment=E``         environment of the latest record of each variant
``dead-ends [experiment=E]``         dead ends (of one experiment)
``context-table``                    the context/info split that decides comparability (bench.compare.context)
``settings``                         the comparison and regression settings in effect (benchbook.yaml)
``repeat-spread``                    how far repeated runs of one configuration land apart (the noise floor's
                                     evidence, bench.compare.noise)
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from bench.compare import Comparison, floor_text, render_context_table_markdown
from bench.record.model import Record

from .blocks import admonition, dead_ends_list, environment_table, errors_box, records_table
from .compare import COMPARED_METRICS, comparison_markdown, site_comparison, verdict_markdown
from .data import SiteData
from .diff import diff_table
from .escape import md_text
from .experiment_page import (
    LATENCY_FIELDS,
    experiment_charts,
    history_table,
    percentile_figure,
    tradeoff_figure,
)
from .history import thresholds_sentence
from .metrics import METRICS
from .paths import RECORD_ID_PATTERN
from .spread import repeat_spread_markdown
from .tables import md_table

__all__ = ["SHORTCODES", "ShortcodeError", "expand_shortcodes"]

_LINE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*bench:(?P<body>.*?)\s*-->[ \t]*$")
_ANY = re.compile(r"<!--\s*bench:")
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_RECORD_ID = re.compile(RECORD_ID_PATTERN)


class ShortcodeError(Exception):
    def __init__(self, page: str, line: int, shortcode: str, problem: str) -> None:
        self.page, self.line, self.shortcode, self.problem = page, line, shortcode, problem
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.page}, line {self.line}: shortcode {self.shortcode!r}: {self.problem}"


class _BadArgs(Exception):
    pass


@dataclass(frozen=True)
class _Call:
    site: SiteData
    page: str
    args: dict[str, str]

    def slug(self, key: str) -> str:
        v = self.args[key]
        if not _SLUG.match(v):
            raise _BadArgs(f"{key}={v!r} is not an experiment/variant name (lowercase letters, digits, . _ -)")
        return v

    def int(self, key: str, default: int, lo: int = 1, hi: int = 1000) -> int:
        if key not in self.args:
            return default
        try:
            v = int(self.args[key])
        except ValueError:
            raise _BadArgs(f"{key}={self.args[key]!r} is not a whole number") from None
        if not lo <= v <= hi:
            raise _BadArgs(f"{key}={v} is outside {lo}..{hi}")
        return v


def _missing(what: str) -> str:
    return admonition("warning", "Nothing to show", f"{md_text(what)} No figures are shown here.")


def _no_experiment(c: _Call, exp: str) -> str | None:
    if exp not in c.site.experiments:
        return _missing(f"There are no records of experiment '{exp}' in this build.")
    return None


def _pick(c: _Call, exp: str, key: str) -> Record | None:
    v = c.args.get(key) if key != "baseline" else c.args.get(key, c.site.baseline_variant(exp))
    if v is None:
        return None
    if _RECORD_ID.match(v):
        loaded = c.site.by_id.get(v)
        return loaded.record if loaded is not None and loaded.record.experiment == exp else None
    if key in c.args:
        c.slug(key)
    for r in c.site.latest_per_variant(exp):
        if r.variant == v:
            return r
    return None


def _latest(c: _Call) -> str:
    n = c.int("n", 10)
    newest = sorted(c.site.records, key=lambda r: (r.record.created_at, r.record.id), reverse=True)[:n]
    return records_table(newest, c.page, columns="short")


def _record_errors(c: _Call) -> str:
    return errors_box(c.site.errors)


def _records(c: _Call) -> str:
    exp = c.slug("experiment")
    return _no_experiment(c, exp) or records_table(c.site.experiments[exp], c.page, columns="short")


def _pair_by_ids(c: _Call) -> tuple[Record, Record] | str:
    """Two records named by id, from any experiments (``experiment`` left out): e.g. two engines side by side."""
    ids = (c.args.get("baseline", ""), c.args.get("candidate", ""))
    if not all(_RECORD_ID.match(v) for v in ids):
        raise _BadArgs("without experiment=, give baseline= and candidate= as record ids")
    a, b = (c.site.by_id.get(v) for v in ids)
    if a is None or b is None:
        missing = [v for v, r in zip(ids, (a, b), strict=True) if r is None]
        return _missing(f"No record {', '.join(repr(v) for v in missing)} in this build.")
    return a.record, b.record


def _pair(c: _Call) -> tuple[Record, Record] | str:
    """The (baseline, candidate) records a comparison shortcode names, or the visible box saying what is missing."""
    if "experiment" not in c.args:
        return _pair_by_ids(c)
    exp = c.slug("experiment")
    if (none := _no_experiment(c, exp)) is not None:
        return none
    base, cand = _pick(c, exp, "baseline"), _pick(c, exp, "candidate")
    if base is None and "baseline" not in c.args and c.site.baseline_variant(exp) is None:
        return _missing(
            f"Experiment '{exp}' has no baseline variant (benchbook.yaml names none; none is called baseline)."
        )
    if base is None or cand is None:
        which = c.args.get("baseline", c.site.baseline_variant(exp)) if base is None else c.args["candidate"]
        return _missing(f"No record '{which}' in experiment '{exp}' in this build.")
    return base, cand


def _comparison(c: _Call) -> Comparison | str:
    pair = _pair(c)
    return pair if isinstance(pair, str) else site_comparison(c.site, *pair)


def _compare(c: _Call) -> str:
    metrics = None
    if "metrics" in c.args:
        metrics = [k for k in c.args["metrics"].split(",") if k]
        bad = [k for k in metrics if k not in COMPARED_METRICS]
        if bad or not metrics:
            raise _BadArgs(f"metrics={c.args['metrics']!r}: each must be one of {', '.join(COMPARED_METRICS)}")
    comp = _comparison(c)
    return comp if isinstance(comp, str) else comparison_markdown(comp, c.page, c.site, metrics)


def _verdict(c: _Call) -> str:
    comp = _comparison(c)
    return comp if isinstance(comp, str) else verdict_markdown(comp)


def _diff(c: _Call) -> str:
    pair = _pair(c)
    if isinstance(pair, str):
        return pair
    base, cand = pair
    return diff_table(base, cand, base.variant, cand.variant)


def _tradeoff(c: _Call) -> str:
    exp = c.slug("experiment")
    return _no_experiment(c, exp) or tradeoff_figure(c.site, exp)


def _percentiles(c: _Call) -> str:
    exp = c.slug("experiment")
    field = c.args["metric"]
    if field not in LATENCY_FIELDS:
        raise _BadArgs(f"metric={field!r} is not one of: {', '.join(LATENCY_FIELDS)}")
    return _no_experiment(c, exp) or percentile_figure(c.site, exp, field)


def _history(c: _Call) -> str:
    exp = c.slug("experiment")
    return _no_experiment(c, exp) or (thresholds_sentence(c.site) + "\n\n" + history_table(c.site, exp, c.page))


def _context_table(c: _Call) -> str:
    return render_context_table_markdown()


def _settings(c: _Call) -> str:
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


def _repeat_spread(c: _Call) -> str:
    return repeat_spread_markdown((lr.record for lr in c.site.records), c.site.settings.comparison.noise_floor)


def _chart(c: _Call) -> str:
    exp = c.slug("experiment")
    key = c.args["metric"]
    if key not in METRICS:
        raise _BadArgs(f"metric={key!r} is not one of: {', '.join(METRICS)}")
    return _no_experiment(c, exp) or experiment_charts(c.site, exp, key)


def _environment(c: _Call) -> str:
    exp = c.slug("experiment")
    return _no_experiment(c, exp) or environment_table(c.site.latest_per_variant(exp), c.page)


def _dead_ends(c: _Call) -> str:
    if "experiment" in c.args:
        return dead_ends_list(c.site.dead_ends_of(c.slug("experiment")), c.page)
    return dead_ends_list(c.site.dead_ends, c.page)


# name -> (handler, required arguments, optional arguments)
SHORTCODES: dict[str, tuple[Callable[[_Call], str], frozenset[str], frozenset[str]]] = {
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
}


def _parse(body: str) -> tuple[str, dict[str, str]]:
    try:
        tokens = shlex.split(body, posix=True)
    except ValueError as exc:
        raise _BadArgs(f"cannot split the arguments ({exc})") from None
    if not tokens:
        raise _BadArgs("no shortcode name")
    name, args = tokens[0], {}
    for tok in tokens[1:]:
        key, eq, value = tok.partition("=")
        if not eq or not key:
            raise _BadArgs(f"argument {tok!r} is not key=value")
        if key in args:
            raise _BadArgs(f"argument {key!r} given twice")
        args[key] = value
    return name, args


def render_shortcode(body: str, site: SiteData, page: str) -> str:
    """Render one shortcode body (``NAME key=value ...``); raises ``_BadArgs`` on misuse."""
    name, args = _parse(body)
    if name not in SHORTCODES:
        raise _BadArgs(f"unknown shortcode {name!r}; known: {', '.join(sorted(SHORTCODES))}")
    handler, required, optional = SHORTCODES[name]
    unknown = set(args) - required - optional
    if unknown:
        allowed = ", ".join(sorted(required | optional)) or "none"
        raise _BadArgs(f"unknown argument(s) {', '.join(sorted(unknown))}; allowed: {allowed}")
    missing = required - set(args)
    if missing:
        raise _BadArgs(f"missing argument(s) {', '.join(sorted(missing))}")
    return handler(_Call(site=site, page=page, args=args))


def expand_shortcodes(markdown: str, site: SiteData, page: str) -> str:
    """Replace every shortcode line of a page; ``page`` is its docs-relative path (for links and errors)."""
    if not _ANY.search(markdown):
        return markdown
    out: list[str] = []
    fence: str | None = None
    for number, line in enumerate(markdown.split("\n"), start=1):
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group("fence")[0] == fence[0] and len(fm.group("fence")) >= len(fence):
                fence = None
            out.append(line)
            continue
        if fm:
            fence = fm.group("fence")
            out.append(line)
            continue
        m = _LINE.match(line)
        if m:
            try:
                rendered = render_shortcode(m.group("body"), site, page)
            except _BadArgs as exc:
                raise ShortcodeError(page, number, line.strip(), str(exc)) from None
            indent = m.group("indent")
            out += ["", *((indent + x) if x else x for x in rendered.rstrip("\n").split("\n")), ""]
        elif _ANY.search(_CODE_SPAN.sub("", line)):
            raise ShortcodeError(page, number, line.strip(), "a shortcode must stand alone on its line")
        else:
            out.append(line)
    return "\n".join(out)
