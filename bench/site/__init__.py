"""The site, as pure functions: records → Markdown pages, tables, inline SVG charts and downloads.

Nothing here imports MkDocs: ``hooks/`` adapts these functions to MkDocs, and ``bench render`` writes the same
pages to a folder for any other generator. Everything public is exported here; the modules behind it are private:

* ``_site_data``, ``_site_load``: what a build is made from (records, dead ends, settings, git, the frame's rows),
  and loading it;
* ``_cache``: what a build keeps for the next, per record (keyed by its bytes and benchbook's code);
* ``_pages``, ``_write_pages``: every generated file, and writing them to a folder;
* ``_record_page``, ``_record_sections``, ``_record_levels``: one page per record;
* ``_experiment_page``, ``_history_pages``, ``_records_table``, ``_dead_ends``, ``_reliability``: the other pages;
* ``_comparisons``, ``_site_style``, ``_ratio_chart``: comparisons in the site's style (``bench.compare`` renders);
* ``_chart_model``, ``_chart_svg``, ``_concurrency_charts``, ``_tradeoff_chart``: charts as data, drawn as SVG;
* ``_shortcodes``, ``_shortcode_call``, ``_shortcode_handlers``: ``<!-- bench:... -->`` in hand-written pages;
* ``_escape``, ``_markup``, ``_format``, ``_paths``, ``_front_matter``, ``_environment``, ``_claims``,
  ``_failed_levels``, ``_git_info``, ``_repeat_spread``: the parts pages share;
* ``_offline`` (``_offline_scan``: one page; ``_offline_pool``: over worker processes): the check that the built
  site loads nothing from outside;
* ``_workers``, ``_page_inputs``, ``_between_builds``: a build's work split over forked processes, what the
  experiment and history pages are made from, and what one ``mkdocs serve`` build leaves the next;
* ``_performance``: the Performance page, from the benchmark scripts' result files;
* ``_page_shell``: record pages' cache keys and the theme's page shell filled per page;
* ``_prerender`` (and ``_prerender_cells``): tables, charts, one-line lists, code blocks, scroll boxes and download
  lines as ready HTML, so Markdown does not parse them again;
* ``_residual_html``: what is left of a record page's Markdown after that (headings, one-line paragraphs,
  admonitions) as HTML, so a record page's body needs no Python-Markdown at all;
* ``_search``: what the search index holds of the generated pages (titles and key fields, not their text).
"""

from ._between_builds import keep_loaded_records
from ._cache import VERSION_GRACE_S, SiteCache, code_version, default_cache_dir
from ._chart_model import Axis, Band, Chart, HLine, Point, Series, Zone
from ._chart_svg import render_svg
from ._comparisons import comparison_markdown, experiment_comparisons, site_comparison, verdict_markdown
from ._concurrency_charts import concurrency_chart, percentile_chart
from ._dead_ends import DeadEnd, DeadEndError, dead_end_page, dead_ends_index, parse_dead_end
from ._escape import front_matter_title, html_attr, html_text, md_code, md_code_block, md_inline, md_text
from ._experiment_page import experiment_charts, experiment_markdown, percentile_figure, tradeoff_figure
from ._history_pages import history_index, history_markdown
from ._offline import check_css, check_html, check_site, is_external
from ._outputs import KEPT_FILES_KEY, Outputs
from ._page_shell import (
    CONTENT_SENTINEL,
    FOLDER_SENTINEL,
    H1_URL_SENTINEL,
    HEADING_SENTINEL,
    NAME_SENTINEL,
    RECORD_PAGES_ENV,
    TITLE_SENTINEL,
    Shell,
    ShellError,
    direct_record_pages,
    generated_page_key,
    record_page_key,
    shell_key,
    shell_page,
    toc_shape,
)
from ._pages import experiments_index, records_index, site_pages
from ._performance import PERFORMANCE_PAGE, load_results, performance_markdown
from ._prerender import Prerendered, prerender, restore
from ._ratio_chart import ratio_chart
from ._record_page import record_markdown, site_record_markdown
from ._reliability import load_reliability, reliability_markdown
from ._residual_html import ResidualHtml, residual_html
from ._search import GENERATED_DIRS, SearchEntry, full_text_indexed, search_entries
from ._shortcodes import SHORTCODES, ShortcodeError, expand_shortcodes
from ._site_data import CONFIG_KEY, RECORDS_ENV, SiteData
from ._site_load import load_site, records_dir
from ._site_style import SITE_STYLE, site_style
from ._text_parts import TextParts
from ._tradeoff_chart import pareto_front, tradeoff_chart
from ._workers import (
    CHILD_ITEMS,
    CHUNKED_RESIDENT_MAX,
    FORK_RESIDENT_MAX,
    WORKERS_ENV,
    WORKERS_KEY,
    WorkersError,
    build_workers,
    forks,
    in_workers,
)
from ._write_pages import write_pages

__all__ = [
    "CHILD_ITEMS",
    "CHUNKED_RESIDENT_MAX",
    "CONFIG_KEY",
    "CONTENT_SENTINEL",
    "FOLDER_SENTINEL",
    "FORK_RESIDENT_MAX",
    "GENERATED_DIRS",
    "H1_URL_SENTINEL",
    "HEADING_SENTINEL",
    "KEPT_FILES_KEY",
    "NAME_SENTINEL",
    "PERFORMANCE_PAGE",
    "RECORDS_ENV",
    "RECORD_PAGES_ENV",
    "SHORTCODES",
    "SITE_STYLE",
    "TITLE_SENTINEL",
    "VERSION_GRACE_S",
    "WORKERS_ENV",
    "WORKERS_KEY",
    "Axis",
    "Band",
    "Chart",
    "DeadEnd",
    "DeadEndError",
    "HLine",
    "Outputs",
    "Point",
    "Prerendered",
    "ResidualHtml",
    "SearchEntry",
    "Series",
    "Shell",
    "ShellError",
    "ShortcodeError",
    "SiteCache",
    "SiteData",
    "TextParts",
    "WorkersError",
    "Zone",
    "build_workers",
    "check_css",
    "check_html",
    "check_site",
    "code_version",
    "comparison_markdown",
    "concurrency_chart",
    "dead_end_page",
    "dead_ends_index",
    "default_cache_dir",
    "direct_record_pages",
    "expand_shortcodes",
    "experiment_charts",
    "experiment_comparisons",
    "experiment_markdown",
    "experiments_index",
    "forks",
    "front_matter_title",
    "full_text_indexed",
    "generated_page_key",
    "history_index",
    "history_markdown",
    "html_attr",
    "html_text",
    "in_workers",
    "is_external",
    "keep_loaded_records",
    "load_reliability",
    "load_results",
    "load_site",
    "md_code",
    "md_code_block",
    "md_inline",
    "md_text",
    "pareto_front",
    "parse_dead_end",
    "percentile_chart",
    "percentile_figure",
    "performance_markdown",
    "prerender",
    "ratio_chart",
    "record_markdown",
    "record_page_key",
    "records_dir",
    "records_index",
    "reliability_markdown",
    "render_svg",
    "residual_html",
    "restore",
    "search_entries",
    "shell_key",
    "shell_page",
    "site_comparison",
    "site_pages",
    "site_record_markdown",
    "site_style",
    "toc_shape",
    "tradeoff_chart",
    "tradeoff_figure",
    "verdict_markdown",
    "write_pages",
]
