"""How long the site takes to build, and how big it gets, as records accumulate.

Generates N synthetic records at run time into a temporary folder (never committed, never under
records/), builds the site strictly with MkDocs, and prints build time and built-site size for
N = the shipped records, 100 and 500.

    python benchmarks/site_build.py [--sizes 100 500] [--repeat 1]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tests" / "fixtures" / "records" / "eagle-fast-verify" / "20261201T090000Z-baseline-a1b2c3d.json"
VARIANTS = ("baseline", "eagle3", "ngram")


def _scale_metrics(level: dict[str, Any], factor: float) -> None:
    for value in level.values():
        if isinstance(value, dict) and "formula" in value:
            for stat in ("value", "mean", "p50", "p90", "p99", "min", "max"):
                if isinstance(value.get(stat), int | float):
                    value[stat] = round(value[stat] * factor, 3)


def synthetic_records(folder: Path, n: int) -> None:
    """Write n valid records: 10 experiments × 3 variants, figures scaled from a measured fixture."""
    from bench.record.load import parse_record  # validate every generated record

    template = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    start = datetime(2027, 1, 1, tzinfo=UTC)
    for i in range(n):
        rec = copy.deepcopy(template)
        variant = VARIANTS[i % len(VARIANTS)]
        created = start + timedelta(minutes=i)
        stamp = created.strftime("%Y%m%dT%H%M%SZ")
        rec["id"] = f"{stamp}-{variant}-{hashlib.sha256(str(i).encode()).hexdigest()[:7]}"
        rec["experiment"] = f"synthetic-{i % 10}"
        rec["variant"] = variant
        rec["title"] = f"Synthetic record {i} ({variant})"
        rec["created_at"] = created.isoformat().replace("+00:00", "Z")
        rec["provenance"]["measured_at"] = rec["created_at"]
        for level in rec["levels"]:
            _scale_metrics(level, 0.8 + 0.4 * ((i * 37) % 100) / 100)
        parse_record(rec, f"synthetic #{i}")
        out = folder / rec["experiment"] / f"{rec['id']}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rec, indent=2), encoding="utf-8")


def build(records: Path, site: Path) -> float:
    env = dict(os.environ, BENCHBOOK_RECORDS_DIR=str(records), NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    t0 = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - t0
    if result.returncode != 0:
        raise SystemExit(f"build failed:\n{result.stdout}\n{result.stderr}")
    return elapsed


def site_size(site: Path) -> tuple[int, int]:
    files = [p for p in site.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 500], help="synthetic record counts")
    parser.add_argument("--repeat", type=int, default=1, help="builds per size (the fastest is reported)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="benchbook-site-bench-") as tmp:
        cases: list[tuple[str, Path, int]] = []
        shipped = ROOT / "records"
        cases.append(("shipped", shipped, len(list(shipped.rglob("*.json")))))
        for n in args.sizes:
            folder = Path(tmp) / f"records-{n}"
            synthetic_records(folder, n)
            cases.append(("synthetic", folder, n))
        for kind, folder, n in cases:
            times = []
            for r in range(args.repeat):
                site = Path(tmp) / f"site-{kind}-{n}-{r}"
                times.append(build(folder, site))
            files, size = site_size(site)
            rows.append((kind, n, min(times), files, size))
    print(f"{'records':>16} {'build (s)':>10} {'files':>7} {'site size (MiB)':>16} {'per record (KiB)':>17}")
    for kind, n, secs, files, size in rows:
        per = size / n / 1024 if n else 0.0
        print(f"{f'{n} {kind}':>16} {secs:>10.2f} {files:>7} {size / 2**20:>16.2f} {per:>17.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
