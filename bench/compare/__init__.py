"""Comparisons you can trust: comparability, bootstrap statistics, computed verdicts and regressions.

Pure functions: records in, dataclasses out, then Markdown/JSON/text renderers. The only I/O lives in
``bench.compare.commands`` (``bench compare`` and ``bench diff``); the settings are ``bench.settings``.
"""

from __future__ import annotations

from .compare import compare_records, context_warnings
from .context import CONTEXT_FIELDS, context_of, fingerprint, render_context_table_markdown, role_of
from .envdiff import FieldDiff, environment_diff
from .evidence import classify, floor_text, level_winner
from .interval import Interval, level_interval
from .regress import Flag, config_key, flags, history, regression_flags
from .render import (
    render_comparison_json,
    render_comparison_markdown,
    render_comparison_text,
    render_diff_json,
    render_diff_markdown,
    render_diff_text,
    render_flags_markdown,
)
from .result import Comparison, ContextWarning, Evidence, ExcludedLevel, LevelComparison, MetricComparison, Ratio
from .runs import runs_of
from .verdict import verdict_sentence

__all__ = [
    "CONTEXT_FIELDS",
    "Comparison",
    "ContextWarning",
    "Evidence",
    "ExcludedLevel",
    "FieldDiff",
    "Flag",
    "Interval",
    "LevelComparison",
    "MetricComparison",
    "Ratio",
    "classify",
    "compare_records",
    "config_key",
    "context_of",
    "context_warnings",
    "environment_diff",
    "fingerprint",
    "flags",
    "floor_text",
    "history",
    "level_interval",
    "level_winner",
    "regression_flags",
    "render_comparison_json",
    "render_comparison_markdown",
    "render_comparison_text",
    "render_context_table_markdown",
    "render_diff_json",
    "render_diff_markdown",
    "render_diff_text",
    "render_flags_markdown",
    "role_of",
    "runs_of",
    "verdict_sentence",
]
