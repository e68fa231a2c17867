"""What a large campaign costs after the jobs end: the collector, its commit, and the review gate, per record.

Generates a campaign of N tasks with one valid record each, at run time, in a temporary folder (never committed,
never under records/): 10 variants × N/10 repeats, figures scaled from a measured fixture so every record's
content differs. Then times, in this process:

* collector: loading, validating and matching every task's records (``bench.slurm.collect.collect``) and
  rendering the list; Slurm is not asked (no cluster here: ``sacct``/``squeue`` add one call per submission);
* commit: ``bench collect --commit``'s work on a fresh repository (blobs, temporary index, tree, commit, ref);
* recollect: the same commit again (every record already on the branch: nothing new);
* gate: ``bench check`` of the branch against main (append-only, load, layout, duplicate ids and contents).

Wall seconds, and this process's CPU time per record (git's own processes are not in it): on a shared machine
the CPU figure is the one that does not depend on the neighbours.

    python benchmarks/collector.py [--sizes 100 1000]
"""

from __future__ import annotations

import argparse
import copy
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
sys.path.insert(0, str(ROOT))
TEMPLATE = ROOT / "tests" / "fixtures" / "records" / "eagle-fast-verify" / "20261201T090000Z-baseline-a1b2c3d.json"
VARIANTS = 10
GIT_ENV = {
    "GIT_AUTHOR_NAME": "benchmark",
    "GIT_AUTHOR_EMAIL": "benchmark@example.invalid",
    "GIT_COMMITTER_NAME": "benchmark",
    "GIT_COMMITTER_EMAIL": "benchmark@example.invalid",
}


def generate(folder: Path, n: int) -> Any:
    """A plan of n tasks and one record per task, as ``bench submit`` and ``bench run`` would leave them."""
    from bench.slurm.plan import Plan, PlanTask, Submission

    template = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    start = datetime(2027, 1, 1, tzinfo=UTC)
    tasks = []
    for i in range(n):
        variant = f"v{i % VARIANTS}"
        group = f"bench-{variant}-20270101T000000Z"
        tasks.append(
            PlanTask(
                index=i, experiment="campaign-bench", variant=variant, engine="sglang", repeat=i // VARIANTS,
                config=f"configs/campaign-bench.{variant}.yaml", run_group=group,
            )
        )  # fmt: skip
        rec = copy.deepcopy(template)
        created = start + timedelta(seconds=i)
        rec.update(
            id=f"{created:%Y%m%dT%H%M%SZ}-{variant}-{i:07x}",
            experiment="campaign-bench",
            variant=variant,
            created_at=created.isoformat().replace("+00:00", "Z"),
            run_group=group,
        )
        rec["levels"][0]["per_request_tok_s"]["value"] = round(50 + i * 0.01, 3)
        out = folder / "tasks" / str(i) / "campaign-bench" / f"{rec['id']}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rec, indent=2), encoding="utf-8")
    sub = Submission(
        number=1, submitted_at=start, array_job="1000", collector_job="1001", tasks=list(range(n)),
        array_script="array-1.sh", collector_script="collect-1.sh",
    )  # fmt: skip
    return Plan(
        name="bench",
        campaign_file=str(folder / "campaign.yaml"),
        created_at=start,
        workdir=str(folder),
        python=sys.executable,
        results=str(folder),
        tasks=tasks,
        submissions=[sub],
    )


def _repo(folder: Path) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    env = {**os.environ, **GIT_ENV}
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    return repo


def measure(n: int) -> dict[str, float]:
    from bench.gate.check import run_check
    from bench.slurm.collect import collect, render_text
    from bench.slurm.commands import commit_records

    os.environ.update(GIT_ENV)
    with tempfile.TemporaryDirectory(prefix="bench-collector-") as tmp:
        folder = Path(tmp)
        plan = generate(folder / "campaign", n)
        repo = _repo(folder)
        t0, c0 = time.perf_counter(), time.process_time()
        outcomes = collect(plan, {})
        render_text(plan, outcomes)
        collector, collector_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert all(o.state == "complete" for o in outcomes), "every generated record must be valid"
        t0 = time.perf_counter()
        line = commit_records(plan, outcomes, repo=repo, branch="campaign/bench", base=None, with_incomplete=False)
        commit = time.perf_counter() - t0
        assert line.startswith(f"committed {n} record(s)"), line
        t0 = time.perf_counter()
        commit_records(plan, outcomes, repo=repo, branch="campaign/bench", base=None, with_incomplete=False)
        recollect = time.perf_counter() - t0
        subprocess.run(["git", "checkout", "-q", "campaign/bench"], cwd=repo, check=True)  # the gate checks HEAD
        t0, c0 = time.perf_counter(), time.process_time()
        result = run_check(repo, "main")
        gate, gate_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert result.ok and len(result.added) == n, result.failures[:3]
    return {
        "collector": collector,
        "collector_cpu": collector_cpu,
        "commit": commit,
        "recollect": recollect,
        "gate": gate,
        "gate_cpu": gate_cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args()
    head = (
        "records", "collector s", "per record ms", "(CPU ms)", "commit s", "recollect s", "gate s", "gate/record ms",
        "(CPU ms)",
    )  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---:" for _ in head) + "|")
    for n in args.sizes:
        m = measure(n)
        row = (
            str(n),
            f"{m['collector']:.2f}",
            f"{1000 * m['collector'] / n:.2f}",
            f"{1000 * m['collector_cpu'] / n:.2f}",
            f"{m['commit']:.2f}",
            f"{m['recollect']:.2f}",
            f"{m['gate']:.2f}",
            f"{1000 * m['gate'] / n:.2f}",
            f"{1000 * m['gate_cpu'] / n:.2f}",
        )
        print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
