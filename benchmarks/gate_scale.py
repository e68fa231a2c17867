"""How the review gate (``bench check``) and ``bench validate`` keep up as records accumulate: one pull request
adding one record to a repository that already holds N.

For each ``--sizes`` N, synthetic records (``benchmarks/synthetic_records.py``; a temporary folder, never
committed to this repository) are committed to a new git repository as its ``main``; a branch then adds one more
record, and ``bench check --base main`` runs on it, as CI runs it on a pull request; then ``bench validate records``
on the same checkout. Printed per size: the gate's exit code, wall seconds, CPU seconds and peak memory (of its
process tree, as ``site_build.py`` measures a build), the same for ``bench validate``, and the records' size on
disk.

    python benchmarks/gate_scale.py --sizes 1000 3000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine_facts import machine  # noqa: E402
from site_build import ENV, run_measured  # noqa: E402
from synthetic_records import write_records  # noqa: E402

from bench.md_table import md_table, number_cell  # noqa: E402

__all__ = ["main", "measure"]

_GIT = ["git", "-c", "user.name=benchbook", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=repo, check=True, stdout=subprocess.DEVNULL)


def measure(n: int, work: Path) -> dict[str, object]:
    """One gate run on a repository of ``n`` records and a branch adding one more."""
    made = work / f"made-{n}"
    write_records(made, n + 1)
    files = sorted(made.rglob("*.json"))
    added = files[-1]  # the newest record: what the pull request adds
    repo = work / f"repo-{n}"
    (repo / "records").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for f in files[:-1]:
        target = repo / "records" / f.relative_to(made)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{n} records")
    _git(repo, "checkout", "-q", "-b", "pr")
    target = repo / "records" / added.relative_to(made)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(added, target)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one record")
    cmd = [sys.executable, "-m", "bench", "check", "--base", "main", "--report", str(work / f"report-{n}.md")]
    run = run_measured(cmd, repo, dict(os.environ, **ENV))
    validate = run_measured([sys.executable, "-m", "bench", "validate", "records"], repo, dict(os.environ, **ENV))
    size = sum(f.stat().st_size for f in files[:-1])
    shutil.rmtree(made)
    shutil.rmtree(repo)
    return {
        "records": n,
        "exit": run.returncode,
        "seconds": run.seconds,
        "cpu_s": run.cpu_s,
        "peak_rss_mib": run.peak_rss / 2**20,
        "records_mib": size / 2**20,
        "validate_exit": validate.returncode,
        "validate_s": validate.seconds,
        "validate_cpu_s": validate.cpu_s,
        "validate_peak_rss_mib": validate.peak_rss / 2**20,
        "output": "\n".join(r.output[-2000:] for r in (run, validate) if r.returncode not in (0, 1)),
    }


def table(rows: list[dict[str, object]]) -> str:
    header = ["records on main", "gate exit", "wall s", "CPU s", "peak RSS MiB", "validate exit", "validate wall s",
              "validate CPU s", "validate peak RSS MiB", "records MiB"]  # fmt: skip
    body = [
        [
            number_cell(r["records"], ",d"),
            str(r["exit"]),
            number_cell(r["seconds"]),
            number_cell(r["cpu_s"]),
            number_cell(r["peak_rss_mib"], ",.0f"),
            str(r["validate_exit"]),
            number_cell(r["validate_s"]),
            number_cell(r["validate_cpu_s"]),
            number_cell(r["validate_peak_rss_mib"], ",.0f"),
            number_cell(r["records_mib"], ",.0f"),
        ]
        for r in rows
    ]
    return md_table(header, body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000], help="records already on main")
    args = parser.parse_args()
    facts = machine()
    print(f"bench check, one record added ({facts['cpu']}, {facts['cores']} cores, python {facts['python']})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="benchbook-gate-") as tmp:
        for n in args.sizes:
            row = measure(n, Path(tmp))
            rows.append(row)
            if row["output"]:
                print(row["output"], file=sys.stderr)
    print(table(rows))
    return 0 if all(r["exit"] == 0 and r["validate_exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
