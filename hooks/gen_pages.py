"""mkdocs-gen-files script: write every generated page (``bench.site.site_pages``) into the build, and the
Performance page from the benchmark scripts' result files (``benchmarks/results/``).

Nothing is written into docs/: gen-files keeps these files in a temporary folder for the build.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import mkdocs_gen_files

from bench.site import (
    CONFIG_KEY,
    KEPT_FILES_KEY,
    PERFORMANCE_PAGE,
    WORKERS_KEY,
    SiteData,
    TextParts,
    direct_record_pages,
    load_results,
    performance_markdown,
    site_pages,
)

site = mkdocs_gen_files.config.get(CONFIG_KEY)  # set by hooks/site_hooks.py (on_pre_build)
if not isinstance(site, SiteData):
    raise SystemExit("benchbook: records were not loaded (is hooks/site_hooks.py listed under hooks: in mkdocs.yml?)")
# The record pages are rendered by hooks/record_pages.py, outside MkDocs' per-page pipeline (unless
# $BENCHBOOK_RECORD_PAGES=generator).
# With the site cache on, downloads are kept there by content and linked into the site (bench.site.Outputs,
# hooks/kept_files.py) instead of written here and copied.
outputs = site.cache.outputs if site.cache is not None else None
kept: dict[str, str] = {}


def _encoded(make: Callable[[], str]) -> bytes:
    return make().encode("utf-8")


given = mkdocs_gen_files.config.get(WORKERS_KEY)  # set with the site: the processes the build may use
workers = given if isinstance(given, int) else 1
for path, content in site_pages(site, workers=workers, record_pages=not direct_record_pages()):
    if outputs is not None and not path.endswith(".md"):
        key = content.key if isinstance(content, TextParts) else None
        if key is not None and (found := outputs.recall(key)) is not None:  # made from the same inputs before
            kept[path] = str(found)
            continue
        try:
            if isinstance(content, TextParts) and content.large:  # never held whole; unchanged parts copied
                made = outputs.keep_joined(path, ((k, partial(_encoded, make)) for k, make in content.keyed_parts()))
            else:
                made = outputs.keep(str(content).encode("utf-8"))
        except OSError:  # the cache cannot be written: written here, as without one
            pass
        else:
            kept[path] = str(made)
            if key is not None:
                outputs.note(key, made)
            continue
    with mkdocs_gen_files.open(path, "w", encoding="utf-8") as fh:
        fh.writelines(content if isinstance(content, TextParts) else (content,))
mkdocs_gen_files.config[KEPT_FILES_KEY] = kept
results = Path(mkdocs_gen_files.config.config_file_path).resolve().parent / "benchmarks" / "results"
with mkdocs_gen_files.open(PERFORMANCE_PAGE, "w", encoding="utf-8") as fh:
    fh.write(performance_markdown(load_results(results)))
