"""Comparisons you can trust: comparability, bootstrap statistics, computed verdicts and regressions.

Pure functions: records in, dataclasses out, then renderers (Markdown in any medium's style, JSON, terminal text,
rows for a DataFrame). The only I/O lives in ``bench.compare.commands`` (``bench compare`` and ``bench diff``); the
settings are ``bench.settings``. Everything public is exported here; the modules behind it are private:

* ``_context``: what makes two records comparable (context vs info), fingerprints;
* ``_envdiff``: every field in which two records differ;
* ``_comparison``: ``compare_records``, level by level; ``_sides``: which runs of a side enter a level;
* ``_bootstrap``, ``_interval``: the seeded bootstrap and the one rule for a side's figure and interval;
* ``_evidence``, ``_verdict``: what a ratio and a level show, and the verdict sentence;
* ``_regress``: configuration histories and regression flags; ``_noise``: how far repeated runs land apart;
* ``_runs``: a record and its repeats;
* ``_rows``, ``_markdown``, ``_json``, ``_terminal``: the renderers.
"""

from __future__ import annotations

from ._bootstrap import forget_resamples
from ._comparison import RatioIntervals, compare_records, context_warnings
from ._context import CONTEXT_FIELDS, context_of, fingerprint, render_context_table_markdown, role_of
from ._envdiff import FieldDiff, environment_diff, flatten_record
from ._evidence import classify, floor_text, level_winner
from ._interval import Interval, SideMemo, level_interval, level_intervals, level_intervals_many
from ._json import render_comparison_json, render_diff_json
from ._markdown import (
    CLAIMED,
    PLAIN,
    MarkdownStyle,
    compact_figures,
    comparison_notes,
    render_comparison_markdown,
    render_diff_markdown,
    render_verdict_markdown,
)
from ._noise import RepeatSpread, SpreadSummary, group_spreads, repeat_groups, repeat_spreads, spread_summary
from ._regress import Flag, config_key, flags, history, recorded_at, regression_flags, series_figure
from ._result import Comparison, ContextWarning, Evidence, ExcludedLevel, LevelComparison, MetricComparison, Ratio
from ._rows import ComparisonRow, comparison_frame, comparison_rows
from ._runs import runs_of
from ._terminal import render_comparison_text, render_diff_text
from ._verdict import verdict_sentence

__all__ = [
    "CLAIMED",
    "CONTEXT_FIELDS",
    "PLAIN",
    "Comparison",
    "ComparisonRow",
    "ContextWarning",
    "Evidence",
    "ExcludedLevel",
    "FieldDiff",
    "Flag",
    "Interval",
    "LevelComparison",
    "MarkdownStyle",
    "MetricComparison",
    "Ratio",
    "RatioIntervals",
    "RepeatSpread",
    "SideMemo",
    "SpreadSummary",
    "classify",
    "compact_figures",
    "compare_records",
    "comparison_frame",
    "comparison_notes",
    "comparison_rows",
    "config_key",
    "context_of",
    "context_warnings",
    "environment_diff",
    "fingerprint",
    "flags",
    "flatten_record",
    "floor_text",
    "forget_resamples",
    "group_spreads",
    "history",
    "level_interval",
    "level_intervals",
    "level_intervals_many",
    "level_winner",
    "recorded_at",
    "regression_flags",
    "render_comparison_json",
    "render_comparison_markdown",
    "render_comparison_text",
    "render_context_table_markdown",
    "render_diff_json",
    "render_diff_markdown",
    "render_diff_text",
    "render_verdict_markdown",
    "repeat_groups",
    "repeat_spreads",
    "role_of",
    "runs_of",
    "series_figure",
    "spread_summary",
    "verdict_sentence",
]
