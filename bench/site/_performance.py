"""The "Performance" page (pure): benchbook's own speed, from the result files the benchmark scripts write.

``benchmarks/results/`` holds one JSON file per benchmark run that is kept; which file holds which kind of result, and
its format, are defined once in ``bench.benchmark_results`` (the fields are described in ``benchmarks/README.md``):
``site-build.json`` (the site's build, size and ``mkdocs serve`` against a plain MkDocs site; ``site-build-before.json``
is the same script's run before the site was optimized), ``cold-floor.json`` (the least time a cold build can take on
the machine, from the work every cold build must do), ``clients.json`` (the client beside its peers) and
``client-scaling.json`` (the sharded client; ``client-scaling-h200.json``: the same script on the H200 host). Every
table names the machine, the date and the commit it was measured on; a missing file is said to be missing, never
filled in, and a file not in its format is named with the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.benchmark_results import CLIENT_SCALING, CLIENTS, COLD_FLOOR, RESULT_FILES, SITE_BUILD, result_error
from bench.md_table import md_table, number_cell, ratio_cell
from bench.record.load import JsonTooDeep, loads_bounded

from ._escape import md_text

__all__ = ["PERFORMANCE_PAGE", "RESULT_FILES", "load_results", "performance_markdown"]

PERFORMANCE_PAGE = "performance.md"

# The site's goals (issue 13): records -> (build seconds, peak RSS MiB); serve at 1,000; the largest page.
SITE_GOALS = {1000: (15.0, None), 10000: (90.0, 2048.0)}
SERVE_GOAL_S = 5.0
PAGE_LIMIT_KIB = 1024.0
OFFLINE_SHARE_GOAL = 0.05  # the offline check: at most this share of the build


def load_results(folder: Path) -> dict[str, Any]:
    """File name → parsed result, for the files of ``RESULT_FILES`` that exist; an unreadable file, or one not in
    the format its script writes (``bench.benchmark_results.result_error``: its kind, format version and shape), → its
    error (shown on the page in the file's place)."""
    out: dict[str, Any] = {}
    for name, fmt in RESULT_FILES.items():
        path = folder / name
        if path.is_file():
            try:
                value = loads_bounded(path.read_text(encoding="utf-8"))
            except JsonTooDeep as exc:
                out[name] = {"error": f"{name}: {exc}"}
                continue
            except (OSError, ValueError) as exc:
                out[name] = {"error": f"{name}: not readable JSON ({exc})"}
                continue
            error = result_error(value, fmt)
            out[name] = value if error is None else {"error": f"{name}: {error}"}
    return out


def _unavailable(result: Mapping[str, Any] | None, name: str) -> str:
    """What a section shows instead of ``benchmarks/results/<name>`` when the file is missing (``result`` None) or
    unreadable (``load_results`` left its error)."""
    if result is None:
        return f"*Not measured yet: `benchmarks/results/{name}` is missing.*"
    return f"*{md_text(result['error'])}*"


def _value(value: Any) -> str:
    """A figure a result file states as it is (a number in its shortest form; null or absent: "—"), else as escaped
    text."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return number_cell(value, "g")  # None: "—"
    return md_text(value)


def _measured(result: Mapping[str, Any], script: str) -> str:
    m = result.get("machine") or {}
    commit = result.get("commit")
    dirty = " (uncommitted changes)" if result.get("dirty") else ""
    load = m.get("load_average_start")
    load_text = f", load average {number_cell(load[0], '.1f')} at the start" if isinstance(load, list) and load else ""
    memory = f", {number_cell(m.get('memory_gib'), '.0f')} GiB" if m.get("memory_gib") else ""
    return (
        f"Measured by `{script}` on {md_text(result.get('date', 'an unknown date'))}: {md_text(m.get('cpu', '?'))}, "
        f"{number_cell(m.get('cores'), 'd')} core(s){memory}{load_text}; benchbook commit "
        f"`{md_text(commit or 'unknown')}`{dirty}."
    )


def _site_table(result: Mapping[str, Any]) -> str:
    header = [
        "Records",
        "Build (s)",
        "Warm build (s)",
        "Peak RSS (MiB)",
        "Warm peak RSS (MiB)",
        "Site (MiB)",
        "Pages",
        "Largest page (KiB)",
        "Search index (KiB)",
        "Serve: new record shown (s)",
        "Offline check (s, share of the build)",
        "Plain MkDocs build (s)",
        "Build ÷ plain",
        "Build CPU (s)",
        "Build CPU ÷ plain CPU",
    ]
    rows = []
    for r in result.get("rows") or []:
        rows.append(
            [
                f"{number_cell(r.get('records'), ',d')} {md_text(r.get('kind', ''))}",
                number_cell(r.get("build_s")),
                number_cell(r.get("warm_build_s")),
                number_cell(r.get("peak_rss_mib"), ",.0f"),
                number_cell(r.get("warm_peak_rss_mib"), ",.0f"),
                number_cell(r.get("site_mib")),
                number_cell(r.get("pages"), ",d"),
                f"{number_cell(r.get('largest_page_kib'), ',.0f')} ({md_text(r.get('largest_page', ''))})",
                number_cell(r.get("search_index_kib"), ",.0f"),
                _serve_cell(r),
                _offline_cell(r),
                number_cell(r.get("plain_build_s")),
                ratio_cell(r.get("ratio")),
                number_cell(r.get("cpu_s")),
                ratio_cell(r.get("cpu_ratio")),
            ]
        )
    return md_table(header, rows, align=["l"] + ["r"] * (len(header) - 1))


def _phase_table(result: Mapping[str, Any]) -> str:
    """Where each cold build's time went (its ``phases``, as the build logged them, each with its CPU seconds from
    ``phases_cpu`` in brackets where the file has them); empty when no row has phases."""
    rows_in = [r for r in result.get("rows") or [] if isinstance(r.get("phases"), dict) and r["phases"]]
    names: list[str] = []
    for r in rows_in:
        names += [str(name) for name in r["phases"] if str(name) not in names]
    if not names:
        return ""

    def cell(row: Mapping[str, Any], name: str) -> str:
        cpu = row.get("phases_cpu")
        shown = number_cell(row["phases"].get(name))
        return f"{shown} ({number_cell(cpu[name])})" if isinstance(cpu, dict) and name in cpu else shown

    header = ["Records (cold build)", *(f"{md_text(n[:1].upper() + n[1:])} (s)" for n in names)]
    rows = [
        [f"{number_cell(r.get('records'), ',d')} {md_text(r.get('kind', ''))}", *(cell(r, n) for n in names)]
        for r in rows_in
    ]
    return md_table(header, rows, align=["l"] + ["r"] * len(names))


def _serve_samples(row: Mapping[str, Any]) -> list[float]:
    samples = row.get("serve_samples_s")
    if not isinstance(samples, list):
        return []
    return [float(x) for x in samples if isinstance(x, int | float) and not isinstance(x, bool)]


def _serve_cell(row: Mapping[str, Any]) -> str:
    """The median serve delay, then each new record's (a result from before several were measured: the one)."""
    samples = _serve_samples(row)
    median = number_cell(row.get("serve_s"))
    return f"{median} ({' / '.join(number_cell(x) for x in samples)})" if len(samples) > 1 else median


def _serve_worst(row: Mapping[str, Any]) -> float | None:
    """What the serve goal is checked against: the slowest new record (else the one figure there is)."""
    samples = _serve_samples(row)
    if samples:
        return max(samples)
    value = row.get("serve_s")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _offline_cell(row: Mapping[str, Any]) -> str:
    share = row.get("offline_share")
    if not isinstance(share, int | float) or isinstance(share, bool):
        return "—"
    return f"{number_cell(row.get('offline_s'))} ({share:.1%})"


def _goal_lines(result: Mapping[str, Any]) -> list[str]:
    lines = []
    for r in result.get("rows") or []:
        n = r.get("records")
        if r.get("kind") != "synthetic" or not isinstance(n, int):
            continue
        build_goal, rss_goal = SITE_GOALS.get(n, (None, None))
        checks = []
        if build_goal is not None:
            checks.append((f"build ≤ {build_goal:.0f} s", r.get("build_s"), build_goal))
            checks.append(
                (f"warm build (the cache a build filled) ≤ {build_goal:.0f} s", r.get("warm_build_s"), build_goal)
            )
        if rss_goal is not None:
            checks.append((f"peak RSS ≤ {rss_goal / 1024:.0f} GiB", r.get("peak_rss_mib"), rss_goal))
            checks.append((f"warm build's peak RSS ≤ {rss_goal / 1024:.0f} GiB", r.get("warm_peak_rss_mib"), rss_goal))
        if n == 1000:
            checks.append((f"serve ≤ {SERVE_GOAL_S:.0f} s, the slowest new record", _serve_worst(r), SERVE_GOAL_S))
        checks.append(("no page over 1 MiB", r.get("largest_page_kib"), PAGE_LIMIT_KIB))
        share = r.get("offline_share")
        if isinstance(share, int | float):
            checks.append((f"offline check ≤ {OFFLINE_SHARE_GOAL:.0%} of the build", share, OFFLINE_SHARE_GOAL))
        for what, value, goal in checks:
            state = "not measured" if not isinstance(value, int | float) else "met" if value <= goal else "**not met**"
            shown = f"{value:.1%}" if what.startswith("offline") and isinstance(value, float) else number_cell(value)
            lines.append(f"- {n:,} records, {what}: {state} ({shown})")
    return lines


def _site_section(results: Mapping[str, Any]) -> list[str]:
    parts = ["## The site: build, size and `mkdocs serve`", ""]
    parts.append(
        "Synthetic records shaped like the H200 measurements (about 50 experiments, four variants, repeats; written "
        "as benchbook writes a record; generated when the benchmark runs, never committed; in runs before 2026-12-03 "
        "half of them held a random marker of llama.cpp's that the site hides on every build, about 3 ms more to "
        "load each) built with "
        "`mkdocs build --strict`, first on an empty site cache "
        "(*build*), then again on the cache that build filled (*warm build*); *serve* is the time from "
        "writing one new record file to `mkdocs serve` serving its page (the median of three new records written one "
        "after another, then each of them; the goal holds for the slowest); the *offline check* is the time the "
        "check every build runs (nothing loaded from outside) took within the cold build, where every file is parsed; "
        "*plain* is a plain MkDocs site (Material, "
        "search, the same Markdown extensions, no benchbook) with as many trivial pages, so *build ÷ plain* is "
        "benchbook's own share. On a shared machine the times move with its load; the ratio moves less. *Build CPU* is "
        "the cold build's CPU seconds (user and system time of the build and every process it forked), which the "
        "machine's load moves much less than the wall time; *build CPU ÷ plain CPU* is the same ratio in CPU time."
    )
    for name, title in (("site-build.json", "Now"), ("site-build-before.json", "Before the site was optimized")):
        result = results.get(name)
        parts += ["", f"### {title}", ""]
        if result is None or "error" in result:
            parts.append(_unavailable(result, name))
            continue
        parts += [_measured(result, SITE_BUILD.script), "", _site_table(result)]
        if phases := _phase_table(result):
            parts += [
                "",
                "Where each cold build's time went, as the build logged it: loading the records, the generator's "
                "pages, the record pages, MkDocs' own pages and the search index, the checks after the build "
                "(the offline check among them). In brackets, where the file has them: each phase's CPU seconds "
                "(the build's and its forked workers'); CPU ÷ seconds is the cores the phase kept busy.",
                "",
                phases,
            ]
        if name == "site-build.json":
            goals = _goal_lines(result)
            if goals:
                parts += ["", "Goals:", "", *goals]
    return [*parts, "", *_floor_section(results.get("cold-floor.json"))]


FLOOR_LABELS = ("validate", "redact", "level intervals", "comparison intervals")  # benchmarks/cold_floor.py


def _floor_section(result: Mapping[str, Any] | None) -> list[str]:
    parts = ["### The least a cold build can take", ""]
    if result is None or "error" in result:
        return [*parts, _unavailable(result, "cold-floor.json")]
    parts += [
        _measured(result, COLD_FLOOR.script),
        "",
        "The work every cold build must do, whatever renders its pages, timed in CPU seconds in one process: read, "
        "migrate and validate every record; redact it; bootstrap every level's intervals; bootstrap every "
        "comparison's intervals and the experiments' chart bands. *Floor* is that CPU time divided by the cores: "
        "the build's time if nothing else cost anything and the work were split over the cores without loss. "
        "*Floor + plain ÷ cores* adds a plain MkDocs build of as many trivial pages, spread over the cores too.",
        "",
    ]
    header = [
        "Records",
        "Cores",
        "Validate (s)",
        "Redact (s)",
        "Level intervals (s)",
        "Comparison intervals (s)",
        "Must-do CPU (s)",
        "Floor (s)",
        "Plain MkDocs (s)",
        "Floor + plain ÷ cores (s)",
        "Build goal (s)",
    ]
    given_goals, found = result.get("goals"), result.get("rows")
    goals: Mapping[str, Any] = given_goals if isinstance(given_goals, dict) else {}
    rows = []
    for r in found if isinstance(found, list) else []:
        if not isinstance(r, dict):
            continue
        floor, plain, cores = r.get("floor"), r.get("plain"), r.get("cores")
        with_plain = None
        if isinstance(floor, int | float) and isinstance(plain, int | float) and isinstance(cores, int) and cores > 0:
            with_plain = floor + plain / cores
        goal = goals.get(str(r.get("records")))
        rows.append(
            [
                number_cell(r.get("records"), ",d"),
                number_cell(cores, "d"),
                *(number_cell(r.get(label)) for label in FLOOR_LABELS),
                number_cell(r.get("mandated")),
                number_cell(floor),
                number_cell(plain),
                number_cell(with_plain),
                number_cell(goal, "g"),
            ]
        )
    return [*parts, md_table(header, rows) if rows else "*The file holds no rows.*"]


def _clients_section(result: Mapping[str, Any] | None) -> list[str]:
    parts = ["## The client beside its peers", ""]
    if result is None or "error" in result:
        return [*parts, _unavailable(result, "clients.json")]
    settings = result.get("settings") or {}
    parts += [
        _measured(result, CLIENTS.script),
        "",
        f"One local zero-delay server, {number_cell(settings.get('output_tokens'), 'd')} output tokens per request, "
        f"medians of {number_cell(settings.get('rounds'), 'd')} interleaved round(s); tokens counted by the server. "
        "*vs benchbook*: the client's server-counted rate over benchbook's in the same round.",
        "",
    ]
    header = ["C", "Client", "Server tok/s", "Tool tok/s", "CPU s / 1k tokens", "vs benchbook", "Failed", "Lag p50/p99"]
    rows = []
    for r in result.get("summary") or []:
        lag = (
            f"{number_cell(r.get('lag_ms_p50'), '.2f')} / {number_cell(r.get('lag_ms_p99'), '.2f')} ms"
            if r.get("lag_ms_p50") is not None
            else "—"
        )
        rows.append(
            [
                number_cell(r.get("concurrency"), "d"),
                md_text(r.get("client", "")),
                number_cell(r.get("server_tok_s"), ",.0f"),
                number_cell(r.get("tool_tok_s"), ",.0f"),
                number_cell(r.get("cpu_s_per_1k_tokens"), ".4f"),
                ratio_cell(r.get("vs_benchbook"), ".2f"),
                number_cell(r.get("failed"), "d"),
                lag,
            ]
        )
    parts.append(md_table(header, rows, align=["r", "l", "r", "r", "r", "r", "r", "r"]) or "*No rows.*")
    skipped = result.get("skipped") or {}
    if skipped:
        parts += ["", *(f"- {md_text(k)} not run: {md_text(v)}" for k, v in skipped.items())]
    return parts


def _scaling_section(result: Mapping[str, Any] | None, name: str, heading: str) -> list[str]:
    parts = [f"## {heading}", ""]
    if result is None or "error" in result:
        return [*parts, _unavailable(result, name)]
    parts += [_measured(result, CLIENT_SCALING.script), ""]
    header = ["Client processes", "Server tok/s", "vs one process", "CPU s / 1k tokens", "Failed", "Lag p50/p99"]
    rows: list[Sequence[str]] = []
    runs = [*(result.get("rows") or [])]
    half = result.get("half_ceiling")
    for r in [*runs, *([half] if isinstance(half, dict) else [])]:
        lag = r.get("lag_ms") or {}
        label = number_cell(r.get("client_processes"), "d") + (" (paced at half the ceiling)" if r is half else "")
        rows.append(
            [
                label,
                number_cell(r.get("server_tok_s"), ",.0f"),
                ratio_cell(r.get("vs_one_process"), ".2f"),
                number_cell(r.get("cpu_s_per_1k_tokens"), ".4f"),
                number_cell(r.get("failed"), "d"),
                f"{number_cell(lag.get('p50'), '.2f')} / {number_cell(lag.get('p99'), '.2f')} ms" if lag else "—",
            ]
        )
    parts.append(md_table(header, rows, align=["l", "r", "r", "r", "r", "r"]) or "*No rows.*")
    if isinstance(half, dict) and half.get("offered_tok_s") is not None:
        loops = sorted({str(r["event_loop"]) for r in [*runs, half] if r.get("event_loop")})
        parts += [
            "",
            f"Paced run: one token every {number_cell(half.get('itl_ms'), '.3f')} ms per stream, "
            f"{number_cell(half.get('offered_tok_s'), ',.0f')} tok/s offered, "
            f"{number_cell(half.get('server_tok_s'), ',.0f')} served; {md_text(str(half.get('split', '')))}."
            + (f" Client event loop: {md_text(', '.join(loops))}." if loops else ""),
        ]
    goals = result.get("goals") or {}
    if goals:
        parts.append("")
        for key, stated in goals.items():
            goal = stated or {}  # a goal stated as null: nothing measured
            met = goal.get("met")
            verdict = "met" if met is True else "**not met**" if met is False else "not measured"
            parts.append(
                f"- {md_text(key)} ({md_text(str(goal.get('target', '')))}): {verdict} ({_value(goal.get('value'))})"
            )
    return parts


def performance_markdown(results: Mapping[str, Any]) -> str:
    """The page: the site's table (now and before), then the client's tables."""
    parts = [
        "# Performance",
        "",
        "How fast benchbook itself is: the site as records pile up, and the benchmark client against its peers. "
        "Every figure below is read from a result file under `benchmarks/results/` that a benchmark script wrote "
        "(see `benchmarks/README.md`); the machine, the date and the commit come with it.",
        "",
        *_site_section(results),
        "",
        *_clients_section(results.get("clients.json")),
        "",
        *_scaling_section(results.get("client-scaling.json"), "client-scaling.json", "The sharded client"),
        "",
        *_scaling_section(
            results.get("client-scaling-h200.json"), "client-scaling-h200.json", "The sharded client on the H200 host"
        ),
        "",
    ]
    return "\n".join(parts)
