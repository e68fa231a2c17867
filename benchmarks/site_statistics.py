"""What the site's statistics cost per record, cold and warm: the rows of the frame (every record x level x figure
with its bootstrap interval), the experiment pages (comparisons and charts with bands) and the history pages.

In process, no MkDocs: synthetic records (``benchmarks/synthetic_records.py``) are written to a temporary folder,
loaded once with a fresh site cache (:mod:`bench.site._cache`), then the rows are made and every experiment and
history page (``--all-pages``: every generated file, by iterating ``bench.site.site_pages``, each file's time
charged to its kind). Then the same again with the cache the first pass
filled (warm: what ``mkdocs serve`` and a rebuild find). Run two versions back to back on the same records and
compare the ratios: these 2-core machines are noisy.

``python benchmarks/site_statistics.py 200 1000`` prints one table per size.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.site import site_pages  # noqa: E402
from bench.site._cache import SiteCache  # noqa: E402
from bench.site._site_data import SiteData  # noqa: E402
from bench.site._site_load import load_site  # noqa: E402
from benchmarks.synthetic_records import write_records  # noqa: E402

KINDS = ("experiments", "history", "records", "other")


def _kind(path: str) -> str:
    if path.startswith("experiments/") and path.endswith(".md") and not path.endswith("index.md"):
        return "experiments"
    if path.startswith("history/") and path.endswith(".md") and not path.endswith("index.md"):
        return "history"
    if path.startswith("records/") and path.endswith(".md") and not path.endswith("index.md"):
        return "records"
    return "other"


def one_pass(site: SiteData) -> dict[str, float]:
    """Seconds for the rows, then for each kind of page (and the count of each)."""
    out: dict[str, float] = {}
    t = time.perf_counter()
    _ = site.rows
    out["rows"] = time.perf_counter() - t
    counts = dict.fromkeys(KINDS, 0)
    spent = dict.fromkeys(KINDS, 0.0)
    t = time.perf_counter()
    for path, _content in site_pages(site):
        now = time.perf_counter()
        kind = _kind(path)
        spent[kind] += now - t
        counts[kind] += 1
        t = time.perf_counter()
    for k in KINDS:
        out[k] = spent[k]
        out[f"n_{k}"] = counts[k]
    return out


def statistics_pass(site: SiteData) -> dict[str, float]:
    """Only the pages whose cost is statistics: the rows, then every experiment and history page, each made by the
    function ``site_pages`` calls for it (in the same order), without the record pages and downloads."""
    from bench.site._experiment_page import experiment_markdown
    from bench.site._history_pages import history_markdown

    out: dict[str, float] = {}
    t = time.perf_counter()
    _ = site.rows
    out["rows"] = time.perf_counter() - t
    t = time.perf_counter()
    for exp in site.all_experiments:
        experiment_markdown(site, exp)
    out["experiments"], out["n_experiments"] = time.perf_counter() - t, len(site.all_experiments)
    t = time.perf_counter()
    for key in site.configurations:
        history_markdown(site, key)
    out["history"], out["n_history"] = time.perf_counter() - t, len(site.configurations)
    return out


def measure(n: int, work: Path, *, all_pages: bool) -> tuple[dict[str, float], dict[str, float]]:
    records = work / f"records-{n}"
    write_records(records, n)
    cache = work / f"cache-{n}"
    run = one_pass if all_pages else statistics_pass
    cold = run(load_site(records, cache=SiteCache(cache)))
    warm = run(load_site(records, cache=SiteCache(cache)))
    return cold, warm


def table(n: int, cold: dict[str, float], warm: dict[str, float]) -> str:
    lines = [
        f"{n} records",
        "| part | pages | cold s | cold ms/record | warm s | warm ms/record |",
        "|---|---|---|---|---|---|",
    ]
    for part in ("rows", *(k for k in KINDS if k in cold)):
        pages = "" if part == "rows" else str(int(cold[f"n_{part}"]))
        lines.append(
            f"| {part} | {pages} | {cold[part]:.2f} | {cold[part] / n * 1000:.1f} | {warm[part]:.2f} | "
            f"{warm[part] / n * 1000:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("sizes", type=int, nargs="*", default=[200], help="synthetic record counts")
    parser.add_argument(
        "--all-pages", action="store_true", help="time every generated file by kind (site_pages), not only statistics"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchbook-stats-") as tmp:
        for n in args.sizes:
            cold, warm = measure(n, Path(tmp), all_pages=args.all_pages)
            print(table(n, cold, warm), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
