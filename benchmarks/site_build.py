"""How the site's build, its size and `mkdocs serve` keep up as records accumulate, next to a plain MkDocs site.

For the shipped records and each ``--sizes`` N, synthetic records (``benchmarks/synthetic_records.py``: shaped
like the H200 measurements, about 50 experiments, four variants, repeats; generated into a temporary folder,
never committed) are built with ``mkdocs build --strict`` and the script prints, in one table:

* build time and peak memory (resident set of the build's whole process tree, sampled every 50 ms, or less often
  where a sample is costly (``sample_wait``): with forked converters the sum of their proportional sets, shared pages
  counted once; and the kernel's own peak for the main process: the larger of the two) of a cold build (an empty
  site cache,
  ``bench.site._cache``), and the time of the same build again on the cache it filled (*warm*);
* the CPU seconds of each build (user and system time of its whole process tree: the build and the processes it
  forked, as the kernel counts them when they end): on a shared machine the wall time moves with the load, the CPU
  time much less, so ``cpu / plain cpu`` is the steadier ratio;
* the built site's size and file count, its largest HTML page (size and name) and the search index's size;
* ``serve``: seconds from writing one new record file (atomically, as ``bench run`` does) to ``mkdocs serve``
  serving that record's page, the median of three records written one after another into one ``mkdocs serve``,
  each once the last one's rebuild has ended (sizes up to ``--serve-max``; the cache as the builds above left it);
* ``offline``: the offline check's time within the cold build (every file parsed; the hook logs it), in seconds and
  as a share of the cold build (the goal: at most 5 %);
* ``plain``: the same build for a plain MkDocs site (``benchmarks/plain_site.py``: Material, search, the same
  Markdown extensions, no benchbook hooks) with as many trivial pages as benchbook's site has HTML pages, and the
  ratio benchbook / plain: benchbook's own share.

A second table gives each cold build's phases as its hooks log them (``hooks/site_hooks.py`` ``BUILD_PHASES``: the
records loaded, the generator's pages, the record pages, MkDocs' own pages, the post-build checks), in seconds, each
with its CPU seconds (the build's and its forked workers', as the hooks count them) in brackets: their ratio is the
cores the phase kept busy.

``--profile N`` also runs one build of N records under cProfile and prints where the time went.
``--output FILE`` writes the figures with the machine, the date and the commit (the Performance page reads them).

    python benchmarks/site_build.py --sizes 100 1000 [--output benchmarks/results/site-build.json]

At ``--sizes 10000`` the temporary folder holds about 1 GB of records, as much of site cache and the built site
(check ``df`` on ``$TMPDIR``); ``benchmarks/site_load.py`` measures the loading alone, without MkDocs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine_facts import commit, machine  # noqa: E402
from plain_site import write_plain_site  # noqa: E402
from synthetic_records import _template_texts, synthetic_record, write_records  # noqa: E402

from bench.benchmark_results import SITE_BUILD, result_head, save_result  # noqa: E402
from bench.md_table import ratio_cell  # noqa: E402
from bench.testing.serve_process import interruptible, stop_serve  # noqa: E402

__all__ = ["main"]

ENV = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", "PYTHONPATH": str(ROOT)}


@dataclass
class Run:
    seconds: float
    peak_rss: int  # bytes
    returncode: int
    output: str
    cpu_s: float = 0.0  # user + system time of the process and every descendant it waited for


@dataclass
class Row:
    kind: str  # "shipped" or "synthetic"
    records: int
    build_s: float
    peak_rss_mib: float
    site_mib: float
    files: int
    pages: int
    largest_page: str
    largest_page_kib: float
    search_index_kib: float
    serve_s: float | None = None  # the median of serve_samples_s (None: a sample missing)
    serve_samples_s: list[float] = field(default_factory=list)  # each new record's delay, in the order written
    warm_build_s: float | None = None  # the same build again, with the cache the first one filled
    cpu_s: float | None = None  # the cold build's CPU seconds (Run.cpu_s)
    warm_cpu_s: float | None = None
    plain_cpu_s: float | None = None
    warm_peak_rss_mib: float | None = None
    plain_build_s: float | None = None
    plain_peak_rss_mib: float | None = None
    offline_s: float | None = None  # the offline check's time within the cold build (every file parsed)
    phases: dict[str, float] | None = None  # where the cold build's time went, as its hooks logged it
    phases_cpu: dict[str, float] | None = None  # the CPU seconds of the same phases
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        return self.build_s / self.plain_build_s if self.plain_build_s else None

    @property
    def cpu_ratio(self) -> float | None:
        return self.cpu_s / self.plain_cpu_s if self.cpu_s and self.plain_cpu_s else None

    @property
    def offline_share(self) -> float | None:
        return self.offline_s / self.build_s if self.offline_s is not None and self.build_s else None


def _kib(path: Path, field_name: str) -> int:
    """A ``Name:   123 kB`` field of a /proc file, in bytes (0: not there)."""
    text = path.read_text()
    return next((int(x.split()[1]) * 1024 for x in text.splitlines() if x.startswith(field_name)), 0)


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (0 once gone). One process: its resident set. Several (a
    build that forks converters): the sum of their proportional sets (``Pss``), each shared page counted once in
    all (a forked child shares the parent's pages; summing resident sets would count them once per process)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        pids.append(p)
    total = 0
    for p in pids:
        try:
            if len(pids) == 1:
                total += _kib(Path(f"/proc/{p}/status"), "VmRSS:")
            else:
                total += _kib(Path(f"/proc/{p}/smaps_rollup"), "Pss:")
        except (OSError, ValueError):
            continue
    return total


SAMPLE_EVERY = 0.05  # seconds between two memory samples, at least
SAMPLER_SHARE = 0.05  # of one core, the most the memory sampler may take


def sample_wait(cost: float) -> float:
    """Seconds to wait after a memory sample that took ``cost`` seconds of this thread's CPU: ``SAMPLE_EVERY``, or
    longer so that sampling takes at most ``SAMPLER_SHARE`` of a core. A process's proportional set
    (``smaps_rollup``) is counted by walking its memory: measured during a 10,000-record build (two processes of
    about 1.3 GB), sampling every 50 ms took 41 % of a core of this 2-core machine, CPU the build then lacked. A
    single process (the plain build) is read from ``status``, which does not walk its memory."""
    return max(SAMPLE_EVERY, cost / SAMPLER_SHARE - cost)


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run ``cmd`` to the end: wall time, peak memory and CPU time of its process tree."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            wait = SAMPLE_EVERY
            while not done.wait(wait):
                start = time.thread_time()  # this thread's CPU, the kernel's reading of /proc included
                peak[0] = max(peak[0], _tree_rss(proc.pid))
                wait = sample_wait(time.thread_time() - start)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    # wait4's usage is the child's own and that of every descendant it waited for (a build waits for its workers)
    cpu = usage.ru_utime + usage.ru_stime
    return Run(elapsed, max(peak[0], usage.ru_maxrss * 1024), proc.returncode, text, cpu)


def mkdocs_env(records: Path, cache: Path | None = None) -> dict[str, str]:
    """The build's environment: the records folder, and the site cache's folder (``off`` without one)."""
    return dict(os.environ, **ENV, BENCHBOOK_RECORDS_DIR=str(records), BENCHBOOK_CACHE_DIR=str(cache or "off"))


# What the build logs of its offline check (hooks/site_hooks.py OFFLINE_TIMING)
_OFFLINE_LINE = re.compile(r"offline check of the built site: ([0-9]+(?:\.[0-9]+)?) s")


def offline_seconds(output: str) -> float | None:
    """The offline check's time as the build logged it (None: not logged, e.g. a plain MkDocs site)."""
    found = _OFFLINE_LINE.findall(output)
    return float(found[-1]) if found else None


# What the build logs of its phases (hooks/site_hooks.py BUILD_PHASES): "load 1.23 s (2.31 CPU s), generator 0.45 s
# (0.80 CPU s), ..." (a build from before the CPU seconds were logged: "load 1.23 s, ...")
_PHASES_LINE = re.compile(r"build phases: (.+?)\s*$", re.MULTILINE)
_PHASE = re.compile(r"([a-z][a-z -]*) ([0-9]+(?:\.[0-9]+)?) s(?: \(([0-9]+(?:\.[0-9]+)?) CPU s\))?")


def _phase_matches(output: str) -> list[re.Match[str]] | None:
    found = _PHASES_LINE.findall(output)
    if not found:
        return None
    matched = [_PHASE.fullmatch(p) for p in found[-1].split(", ")]
    return [m for m in matched if m is not None] if all(matched) else None


def build_phases(output: str) -> dict[str, float] | None:
    """The build's phases and their (wall) seconds, in the order logged (the last line when there are several; None:
    not logged, e.g. a plain MkDocs site, or not in the form the hooks write)."""
    matched = _phase_matches(output)
    return None if matched is None else {m.group(1): float(m.group(2)) for m in matched}


def build_phases_cpu(output: str) -> dict[str, float] | None:
    """The CPU seconds of the build's phases (its own and its ended children's), as :func:`build_phases` reads the
    seconds; None also when the line holds no CPU seconds (a build from before they were logged)."""
    matched = _phase_matches(output)
    if matched is None or any(m.group(3) is None for m in matched):
        return None
    return {m.group(1): float(m.group(3)) for m in matched}


def build(config: Path, site: Path, env: dict[str, str]) -> Run:
    # at INFO (no -q): the benchbook hooks log the offline check's time (offline_seconds)
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    run = run_measured(cmd, config.parent, env)
    if run.returncode != 0:
        raise SystemExit(f"build failed ({config}):\n{run.output[-4000:]}")
    return run


@dataclass
class SiteStats:
    files: int
    size: int
    pages: int
    largest: tuple[str, int]
    search_index: int


def site_stats(site: Path) -> SiteStats:
    files = [p for p in site.rglob("*") if p.is_file()]
    html = [p for p in files if p.suffix == ".html" and p.name != "404.html"]
    largest = max(html, key=lambda p: p.stat().st_size)
    index = site / "search" / "search_index.json"
    return SiteStats(
        files=len(files),
        size=sum(p.stat().st_size for p in files),
        pages=len(html),
        largest=(largest.relative_to(site).as_posix(), largest.stat().st_size),
        search_index=index.stat().st_size if index.exists() else 0,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, OSError):
        return 0, ""


def _wait_for(url: str, needle: str, deadline: float, proc: subprocess.Popen[bytes]) -> float | None:
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            return None
        status, body = _get(url)
        if status == 200 and needle in body:
            return time.perf_counter()
        time.sleep(0.1)
    return None


SERVE_SAMPLES = 3  # new records written one after another into one `mkdocs serve`; the row states their median


def serve_delays(
    records: Path, n: int, timeout: float, cache: Path, samples: int = SERVE_SAMPLES
) -> tuple[list[float], str]:
    """Seconds from writing a new record (n+1, n+2, ...: ``samples`` of them, one after another, each once the
    last one's page was served and its rebuild had ended) into ``records`` to ``mkdocs serve`` serving its page;
    fewer (with why) when one is not served within ``timeout``. The records are removed afterwards."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", "-f", str(ROOT / "mkdocs.yml")]
    delays: list[float] = []
    written: list[Path] = []
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=mkdocs_env(records, cache),
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,  # stop_serve interrupts it as Ctrl-C does
        )
        try:
            if _wait_for(f"{base}/", "benchbook", time.perf_counter() + timeout, proc) is None:
                log.seek(0)
                return delays, "first build not served: " + log.read().decode("utf-8", "replace")[-2000:]
            settle = 1.0  # let the watcher settle after the first build
            for i in range(samples):
                _wait_quiet(log, settle)
                rec = synthetic_record(n + i, n + i, _template_texts())
                path = records / rec["experiment"] / f"{rec['id']}.json"
                path.parent.mkdir(exist_ok=True)  # the shipped records have no such experiment: a new one
                tmp = path.with_name(f".{path.name}.tmp")
                tmp.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
                os.replace(tmp, path)
                t0 = time.perf_counter()
                written.append(path)
                url = f"{base}/records/{rec['experiment']}/{rec['id']}.html"
                seen = _wait_for(url, rec["id"], t0 + timeout, proc)
                if seen is None:
                    log.seek(0)
                    return delays, "new record not served in time: " + log.read().decode("utf-8", "replace")[-2000:]
                delays.append(seen - t0)
            return delays, ""
        finally:
            for path in written:
                path.unlink(missing_ok=True)
            stop_serve(proc)  # as Ctrl-C: serve removes its temporary site folder


def _wait_quiet(log: IO[bytes], quiet: float, longest: float = 120.0) -> None:
    """Until ``mkdocs serve`` has logged nothing for ``quiet`` seconds (its rebuild has ended), at most ``longest``."""
    deadline = time.perf_counter() + longest
    size, since = -1, time.perf_counter()
    while time.perf_counter() < deadline:
        now = os.fstat(log.fileno()).st_size
        if now != size:
            size, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            return
        time.sleep(0.1)


def measure(kind: str, records: Path, n: int, work: Path, *, serve: bool, plain: bool) -> Row:
    site = work / f"site-{kind}-{n}"
    cache = work / f"cache-{kind}-{n}"  # empty: the first build is a cold one
    run = build(ROOT / "mkdocs.yml", site, mkdocs_env(records, cache))
    stats = site_stats(site)
    row = Row(
        kind=kind,
        records=n,
        build_s=round(run.seconds, 2),
        cpu_s=round(run.cpu_s, 2),
        peak_rss_mib=round(run.peak_rss / 2**20, 1),
        site_mib=round(stats.size / 2**20, 1),
        files=stats.files,
        pages=stats.pages,
        largest_page=stats.largest[0],
        largest_page_kib=round(stats.largest[1] / 1024, 1),
        search_index_kib=round(stats.search_index / 1024, 1),
    )
    row.offline_s = offline_seconds(run.output)
    row.phases = build_phases(run.output)
    row.phases_cpu = build_phases_cpu(run.output)
    shutil.rmtree(site)
    warm = build(ROOT / "mkdocs.yml", site, mkdocs_env(records, cache))
    row.warm_build_s = round(warm.seconds, 2)
    row.warm_cpu_s = round(warm.cpu_s, 2)
    row.warm_peak_rss_mib = round(warm.peak_rss / 2**20, 1)
    shutil.rmtree(site)
    if plain:
        project = work / f"plain-{n}"
        config = write_plain_site(project, stats.pages)
        prun = build(config, project / "site", dict(os.environ, **ENV))
        row.plain_build_s = round(prun.seconds, 2)
        row.plain_cpu_s = round(prun.cpu_s, 2)
        row.plain_peak_rss_mib = round(prun.peak_rss / 2**20, 1)
        shutil.rmtree(project)
    if serve:  # on the cache the builds above filled, as a user's second `mkdocs serve` finds it
        delays, why = serve_delays(records, n, timeout=max(120.0, 4 * run.seconds), cache=cache)
        row.serve_samples_s = [round(d, 2) for d in delays]
        row.serve_s = round(statistics.median(delays), 2) if len(delays) == SERVE_SAMPLES else None
        if why:
            row.notes.append(why)
    return row


def _cell(value: float | None, fmt: str = ".1f") -> str:
    return "—" if value is None else format(value, fmt)


def table(rows: list[Row]) -> str:
    head = [
        "records",
        "build s",
        "warm build s",
        "peak RSS MiB",
        "warm RSS MiB",
        "site MiB",
        "pages",
        "largest page KiB",
        "search index KiB",
        "serve s",
        "offline check s (share)",
        "plain build s",
        "plain RSS MiB",
        "build / plain",
        "CPU s (warm, plain)",
        "CPU / plain CPU",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            f"{r.records:,} {r.kind}",
            _cell(r.build_s),
            _cell(r.warm_build_s),
            _cell(r.peak_rss_mib, ".0f"),
            _cell(r.warm_peak_rss_mib, ".0f"),
            _cell(r.site_mib),
            f"{r.pages:,}",
            f"{_cell(r.largest_page_kib, '.0f')} ({r.largest_page})",
            _cell(r.search_index_kib, ".0f"),
            _cell(r.serve_s),
            f"{_cell(r.offline_s)} ({r.offline_share:.1%})" if r.offline_share is not None else "—",
            _cell(r.plain_build_s),
            _cell(r.plain_peak_rss_mib, ".0f"),
            ratio_cell(r.ratio),
            f"{_cell(r.cpu_s)} ({_cell(r.warm_cpu_s)}, {_cell(r.plain_cpu_s)})",
            ratio_cell(r.cpu_ratio),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def profile(n: int, work: Path, top: int) -> None:
    """One build of n synthetic records under cProfile: where the time goes."""
    from profile_summary import summarize

    records = work / f"profile-{n}"
    write_records(records, n)
    out = work / "build.prof"
    cmd = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "mkdocs", "build", "--strict", "-q"]
    cmd += ["-f", str(ROOT / "mkdocs.yml"), "-d", str(work / "site-profile")]
    run = run_measured(cmd, ROOT, mkdocs_env(records, work / "cache-profile"))
    if run.returncode != 0:
        raise SystemExit(f"profiled build failed:\n{run.output[-4000:]}")
    print(f"\nProfile of one {n}-record build ({run.seconds:.1f} s under cProfile):\n")
    print(summarize(out, top))
    shutil.rmtree(records)


def write_result(
    args: argparse.Namespace,
    rows: list[Row],
    started: datetime,
    load_start: tuple[float, float, float],
    measured: dict[str, object],
) -> None:
    """The figures so far, with the machine, the date and the commit, written atomically to ``args.output``."""
    result = {
        **result_head(SITE_BUILD),
        "date": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        **measured,  # as checked out when the run began (not after its own output changed the tree)
        "machine": {
            **machine(),
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {"sizes": args.sizes, "serve_max": args.serve_max, "plain": not args.no_plain},
        "rows": [
            {
                **asdict(r),
                "ratio": round(r.ratio, 2) if r.ratio else None,
                "cpu_ratio": round(r.cpu_ratio, 2) if r.cpu_ratio else None,
                "offline_share": round(r.offline_share, 4) if r.offline_share is not None else None,
            }
            for r in rows
        ],
    }
    save_result(args.output, SITE_BUILD, result)


def phase_table(rows: list[Row]) -> str:
    """Where each cold build's time went (its phases, as its hooks logged them, each with its CPU seconds in brackets
    where they were logged); empty when none logged them."""
    names: list[str] = []
    for r in rows:
        names += [name for name in (r.phases or {}) if name not in names]
    if not names:
        return ""
    lines = [
        "| records (cold build) | " + " | ".join(f"{n} s (CPU s)" for n in names) + " |",
        "|" + "---|" * (len(names) + 1),
    ]
    for r in rows:
        phases, cpu = r.phases or {}, r.phases_cpu or {}
        cells = [_cell(phases.get(n)) + (f" ({_cell(cpu[n])})" if n in cpu else "") for n in names]
        lines.append(f"| {r.records:,} {r.kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 1000], help="synthetic record counts")
    parser.add_argument("--serve-max", type=int, default=1000, help="measure `mkdocs serve` up to this many records")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain-MkDocs yardstick")
    parser.add_argument("--no-shipped", action="store_true", help="skip the shipped records")
    parser.add_argument("--profile", type=int, metavar="N", help="also profile one build of N records")
    parser.add_argument("--top", type=int, default=25, help="functions listed by the profile")
    parser.add_argument("--output", type=Path, help="write the figures, machine, date and commit as JSON")
    args = parser.parse_args()
    started = datetime.now(UTC)
    load_start = os.getloadavg()
    measured = commit()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="benchbook-site-bench-") as tmp:
        work = Path(tmp)
        if not args.no_shipped:
            shipped = work / "shipped"
            shutil.copytree(ROOT / "records", shipped)  # serve writes a record into it
            n = len(list(shipped.rglob("*.json")))
            rows.append(measure("shipped", shipped, n, work, serve=True, plain=not args.no_plain))
            print(table(rows), flush=True)
        for n in args.sizes:
            folder = work / f"records-{n}"
            write_records(folder, n)
            rows.append(measure("synthetic", folder, n, work, serve=n <= args.serve_max, plain=not args.no_plain))
            print(f"\n{n:,} records done\n" + table(rows) + "\n\n" + phase_table(rows), flush=True)
            if args.output:  # every finished size is kept, however the next one ends
                write_result(args, rows, started, load_start, measured)
            shutil.rmtree(folder)
        if args.profile:
            profile(args.profile, work, args.top)
    print("\n" + table(rows))
    if phases := phase_table(rows):
        print("\n" + phases)
    for r in rows:
        for note in r.notes:
            print(f"note ({r.records} records): {note}")
    if args.output:
        write_result(args, rows, started, load_start, measured)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
