"""How long loading the site's records takes, and how much memory the loaded site holds, without MkDocs.

For each ``--sizes`` N, synthetic records (``benchmarks/synthetic_records.py``; a temporary folder, never
committed) are loaded with ``bench.site.load_site`` in a fresh process, twice: *cold* (an empty site cache:
every record read, validated, redacted, its rows' bootstrap intervals computed) and *warm* (the cache the cold
load filled). Each process then writes every record's CSV download. Printed per run: seconds to load, seconds for
the CSVs, the resident set after loading and the process's peak (``ru_maxrss``).

    python benchmarks/site_load.py --sizes 1000 10000

10,000 records take about 1 GB of disk for the records and as much again for the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

__all__ = ["main"]


def _rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(records: Path, cache: Path) -> dict[str, float]:
    """One load in this process (the parent runs it in a fresh one)."""
    from bench.site import SiteCache, load_site

    site_cache = SiteCache(cache)
    t0 = time.perf_counter()
    site = load_site(records, cache=site_cache)
    t1 = time.perf_counter()
    after_load = _rss_mib()
    for lr in site.records:
        site.csv_of([lr.record.id])
    t2 = time.perf_counter()
    return {
        "records": len(site.records),
        "errors": len(site.errors),
        "hits": site_cache.hits,
        "load_s": round(t1 - t0, 2),
        "csv_s": round(t2 - t1, 2),
        "rss_after_load_mib": round(after_load, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _run(records: Path, cache: Path) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", str(records), str(cache)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000])
    parser.add_argument("--child", nargs=2, metavar=("RECORDS", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]))))
        return 0
    from synthetic_records import write_records

    print("| records | run | load s | CSVs s | RSS after load MiB | peak RSS MiB |", flush=True)
    print("|---|---|---|---|---|---|", flush=True)
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="benchbook-site-load-") as tmp:
            records, cache = Path(tmp) / "records", Path(tmp) / "cache"
            write_records(records, n)
            for run in ("cold", "warm"):
                r = _run(records, cache)
                if r["errors"]:
                    raise SystemExit(f"{r['errors']} record error(s) in the synthetic records")
                print(
                    f"| {r['records']:,} | {run} | {r['load_s']} | {r['csv_s']} | {r['rss_after_load_mib']} "
                    f"| {r['peak_rss_mib']} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
