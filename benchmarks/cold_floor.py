"""The least time a cold site build can take on this machine, whatever renders its pages: the work every cold build
must do, timed, divided by the cores.

Every cold build (an empty site cache) must, by the project's standards and the pages' content:

* read, migrate and validate every record (``bench.record.load.load_record``): *validate*;
* pass it through the one redaction (``bench.site._site_load.redacted_record``): *redact*;
* bootstrap every figure's interval at every level of every record, the intervals the frame's rows, the record pages
  and the downloads show (``bench.compare.level_intervals_many``): *level intervals*;
* bootstrap every comparison's ratio intervals and the bands of the experiments' charts (``side_figures_many``,
  ``bootstrap_ratio``): *comparison intervals*.

Synthetic records (``benchmarks/synthetic_records.py``, as ``site_build.py`` makes them; a temporary folder, never
committed) are loaded cold as a cold build loads them (``bench.site.load_site`` with an empty site cache and two
workers, the records read into the cache first, in batches), but with the workers' share done in this one process
(nothing forked), then every generated page but the record pages is made (``bench.site.site_pages``). Each of the
functions above is timed in process CPU seconds (``time.process_time``); a timed call inside another timed call
counts once, in the outer one.

* ``floor`` = that CPU / the usable cores: the cold build's time if nothing else cost anything and the work were
  split over the cores without loss. Where it is above the goal, no renderer can meet the goal on this machine
  without doing less of this work.
* ``plain``: a plain MkDocs build of as many trivial pages as the site has (``benchmarks/plain_site.py``, the same
  theme and extensions, no benchbook hooks), wall seconds; ``floor + plain / cores``: the floor with each page costing
  what a trivial page costs in MkDocs, spread over the cores as well.
* ``load + pages``: the CPU seconds of the whole in-process pass (loading and the generated pages, no MkDocs, no
  record pages), for scale.

    python benchmarks/cold_floor.py --sizes 1000 10000 [--output benchmarks/results/cold-floor.json]

``--output`` writes the rows with the machine, the date and the commit (the Performance page reads the file; its
format is in ``benchmarks/README.md``). At 10,000 records the pass takes several minutes and about 2 GB of memory
and of disk (records and cache).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine_facts import commit, machine  # noqa: E402
from plain_site import write_plain_site  # noqa: E402
from site_build import ENV, build  # noqa: E402
from synthetic_records import write_records  # noqa: E402

import bench.compare._bootstrap as _bootstrap  # noqa: E402
import bench.compare._interval as _interval  # noqa: E402
import bench.record.load as _load  # noqa: E402
import bench.site._site_load as _site_load  # noqa: E402
import bench.site._workers as _workers  # noqa: E402
from bench.benchmark_results import COLD_FLOOR, result_head, save_result  # noqa: E402
from bench.md_table import md_table  # noqa: E402
from bench.site import site_pages  # noqa: E402
from bench.site._cache import SiteCache  # noqa: E402

GOALS = {1000: 15.0, 10000: 90.0}  # issue 13: a full build of this many records, seconds
# (label, module, function name): the work every cold build must do (the module docstring)
TIMED = (
    ("validate", _load, "load_record"),
    ("redact", _site_load, "redacted_record"),
    ("level intervals", _interval, "level_intervals_many"),
    ("comparison intervals", _interval, "side_figures_many"),
    ("comparison intervals", _bootstrap, "bootstrap_ratio"),
)
LABELS = tuple(dict.fromkeys(label for label, _, _ in TIMED))


class Clock:
    """Process CPU seconds spent in each label's functions, each call counted once (the outermost timed call)."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(LABELS, 0.0)
        self._depth = 0

    def timed(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[label] += time.process_time() - start
                self._depth -= 1

        return wrapper


@contextmanager
def timing(clock: Clock) -> Iterator[None]:
    """Every reference a ``bench`` module holds to a timed function replaced by its timed wrapper, for the block."""
    replaced: list[tuple[object, str, object]] = []
    for label, module, name in TIMED:
        fn = getattr(module, name)
        wrapper = clock.timed(label, fn)
        modules = [m for key, m in list(sys.modules.items()) if key == "bench" or key.startswith("bench.")]
        for held in modules:
            for attr, value in list(vars(held).items()):
                if value is fn:
                    replaced.append((held, attr, value))
                    setattr(held, attr, wrapper)
    try:
        yield
    finally:
        for held_by, attr, value in reversed(replaced):
            setattr(held_by, attr, value)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def measure(n: int, work: Path, *, plain: bool) -> dict[str, Any]:
    records = work / f"records-{n}"
    write_records(records, n)
    clock = Clock()
    # the workers' share done in this process (bench.site.in_workers runs it here when it does not fork): timed
    with patch.object(_workers, "forks", lambda workers, max_resident=None: False), timing(clock):
        start = time.process_time()
        site = _site_load.load_site(records, ROOT / "docs", cache=SiteCache(work / f"cache-{n}"), workers=2)
        if site.errors:
            raise SystemExit(f"{len(site.errors)} synthetic record(s) did not load: {site.errors[0]}")
        generated = sum(path.endswith(".md") for path, _ in site_pages(site, record_pages=False))
        total = time.process_time() - start
    pages = n + generated + sum(1 for _ in (ROOT / "docs").rglob("*.md")) + 1  # + the theme's 404 page
    row: dict[str, Any] = {"records": n, "cores": usable_cores(), "pages": pages, "total": total, **clock.spent}
    row["mandated"] = sum(clock.spent.values())
    row["floor"] = row["mandated"] / row["cores"]
    if plain:
        project = work / f"plain-{n}"
        config = write_plain_site(project, pages)
        row["plain"] = build(config, project / "site", dict(os.environ, **ENV)).seconds
    return row


def table(rows: list[dict[str, Any]]) -> str:
    head = [
        "records",
        "cores",
        *(f"{label} s" for label in LABELS),
        "must-do CPU s",
        "floor s",
        "plain MkDocs s (pages)",
        "floor + plain / cores s",
        "goal s",
        "load + pages CPU s",
    ]
    cells = []
    for r in rows:
        plain, goal = r.get("plain"), GOALS.get(r["records"])
        with_plain = r["floor"] + plain / r["cores"] if plain is not None else None
        over = " (over the goal)" if goal is not None and r["floor"] > goal else ""
        cells.append(
            [
                f"{r['records']:,}",
                str(r["cores"]),
                *(f"{r[label]:.1f}" for label in LABELS),
                f"{r['mandated']:.1f}",
                f"{r['floor']:.1f}{over}",
                f"{plain:.1f} ({r['pages']:,})" if plain is not None else "—",
                f"{with_plain:.1f}" if with_plain is not None else "—",
                f"{goal:g}" if goal is not None else "—",
                f"{r['total']:.1f}",
            ]
        )
    return md_table(head, cells)


def write_result(path: Path, rows: list[dict[str, Any]], started: datetime, measured: dict[str, object]) -> None:
    """The rows so far, with the machine, the date and the commit, written atomically to ``path``."""
    result = {
        **result_head(COLD_FLOOR),
        "date": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        **measured,  # as checked out when the run began
        "machine": machine(),
        "labels": list(LABELS),
        "goals": {str(n): s for n, s in GOALS.items()},
        "rows": [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in rows],
    }
    save_result(path, COLD_FLOOR, result)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000], help="synthetic record counts")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain MkDocs build")
    parser.add_argument("--output", type=Path, help="write the rows, machine, date and commit as JSON")
    args = parser.parse_args()
    started, measured = datetime.now(UTC), commit()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="benchbook-floor-") as tmp:
        for n in args.sizes:
            rows.append(measure(n, Path(tmp), plain=not args.no_plain))
            print(table(rows[-1:]), flush=True)
            if args.output:
                write_result(args.output, rows, started, measured)
    if len(rows) > 1:
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
