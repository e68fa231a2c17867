"""Where a profiled `mkdocs build` spent its time: the build's phases, then the costliest functions.

python benchmarks/profile_summary.py build.prof [TOP]
"""

from __future__ import annotations

import io
import pstats
import sys
from pathlib import Path

__all__ = ["summarize"]

# (phase, file name ending, function): the phase's time is that function's cumulative time.
PHASES: tuple[tuple[str, str, str], ...] = (
    ("load records (on_pre_build)", "hooks/site_hooks.py", "on_pre_build"),
    ("generate pages (gen-files)", "mkdocs_gen_files/plugin.py", "on_files"),
    ("shortcodes (on_page_markdown)", "hooks/site_hooks.py", "on_page_markdown"),
    ("Markdown -> HTML (Page.render)", "mkdocs/structure/pages.py", "render"),
    ("search: index pages (Material)", "material/plugins/search/plugin.py", "on_page_context"),
    ("search: write the index (Material)", "material/plugins/search/plugin.py", "on_post_build"),
    ("search: index pages (MkDocs)", "mkdocs/contrib/search/__init__.py", "on_page_context"),
    ("search: write the index (MkDocs)", "mkdocs/contrib/search/__init__.py", "on_post_build"),
    ("theme templates (jinja2)", "jinja2/environment.py", "render"),
    ("offline check (on_post_build)", "hooks/site_hooks.py", "on_post_build"),
    ("write files", "mkdocs/utils/__init__.py", "write_file"),
    ("copy static files", "mkdocs/structure/files.py", "copy_file"),
)
TOTAL = ("mkdocs/commands/build.py", "build")


def _cumulative(stats: pstats.Stats, file_end: str, func: str) -> float:
    table = stats.stats  # type: ignore[attr-defined]
    return float(sum(v[3] for (f, _, name), v in table.items() if name == func and f.endswith(file_end)))


def summarize(path: Path, top: int = 25) -> str:
    stats = pstats.Stats(str(path))
    total = _cumulative(stats, *TOTAL) or 1.0
    lines = [f"{'phase':<36} {'seconds':>8} {'share':>6}"]
    for phase, file_end, func in PHASES:
        secs = _cumulative(stats, file_end, func)
        lines.append(f"{phase:<36} {secs:>8.1f} {secs / total:>6.0%}")
    lines.append(f"{'whole build (mkdocs build)':<36} {total:>8.1f} {1:>6.0%}")
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(top)
    body = out.getvalue()
    start = body.find("   ncalls")
    lines += ["", f"top {top} functions by own time:", body[start:].rstrip() if start >= 0 else body.rstrip()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 25))
