"""Progress of a sweep (rich): a bar per level with requests done, errors and live output tok/s, then a
summary table of the record.

Rendering is separate from output: :func:`summary_table` is a pure function of a record. Every line printed
passes through :func:`bench.redact.redact_text`. On a terminal the
bars are live; when stdout is not a TTY (CI logs, ``| tee``) nothing animates: one plain line per finished
level is printed instead.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.record.model import Level, Metric, Record
from bench.redact import redact_text

__all__ = ["SweepProgress", "level_line", "outcome_lines", "summary_table"]


class _Result(Protocol):
    ok: bool
    output_tokens: int | None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _p(metric: Metric | None, stat: str) -> float | None:
    if metric is None:
        return None
    v = getattr(metric, stat, None)
    if v is None and stat == "p50":
        v = metric.value
    return None if v is None else float(v)


def _value(metric: Metric | None) -> float | None:
    return None if metric is None else metric.headline()


def _accept(level: Level) -> str:
    spec = level.speculative
    if spec is None:
        return "-"
    parts = []
    if spec.acceptance_rate is not None:
        parts.append(f"{spec.acceptance_rate.headline():.0%}")
    if spec.accept_length is not None:
        parts.append(f"{spec.accept_length.headline():.2f}")
    return " / ".join(parts) or "-"


def summary_table(record: Record) -> Table:
    """One row per level: what the sweep measured (pure: returns a renderable)."""
    table = Table(title=f"{record.experiment} / {record.variant}: {record.status.state}", title_justify="left")
    for name in (
        "C",
        "ok / failed",
        "out tok/s",
        "total tok/s",
        "tok/s/req p50",
        "TTFT p50 ms",
        "TTFT p99 ms",
        "TPOT p50 ms",
        "accept rate / length",
        "level",
    ):
        table.add_column(name, justify="right")
    for lv in record.levels:
        flagged = lv.errors is not None and lv.errors.flagged
        table.add_row(
            lv.key,
            f"{lv.requests_completed if lv.requests_completed is not None else '-'} / "
            f"{lv.requests_failed if lv.requests_failed is not None else '-'}" + (" !" if flagged else ""),
            _fmt(_value(lv.output_throughput)),
            _fmt(_value(lv.total_throughput)),
            _fmt(_p(lv.per_request_tok_s, "p50")),
            _fmt(_p(lv.ttft_ms, "p50")),
            _fmt(_p(lv.ttft_ms, "p99")),
            _fmt(_p(lv.tpot_ms, "p50"), 2),
            _accept(lv),
            "FAILED" if lv.failed else "ok",
        )
    return table


def outcome_lines(record: Record) -> list[str]:
    """Why each failed level failed, then the run's status (pure)."""
    lines = [f"level C={lv.key} FAILED: {lv.failure}" for lv in record.levels if lv.failed]
    if record.status.message:
        lines.append(f"status: {record.status.state}: {record.status.message}")
    return lines


def level_line(level: Level) -> str:
    """A one-line summary of a finished level, for logs."""
    return (
        f"level C={level.key}: {level.requests_completed} ok, {level.requests_failed} failed, "
        f"output {_fmt(_value(level.output_throughput))} tok/s, TTFT p50 {_fmt(_p(level.ttft_ms, 'p50'))} ms, "
        f"TPOT p50 {_fmt(_p(level.tpot_ms, 'p50'), 2)} ms" + (f"; FAILED: {level.failure}" if level.failed else "")
    )


class SweepProgress:
    """Live per-level bars on a terminal, plain lines otherwise."""

    def __init__(self, console: Console | None = None) -> None:
        if console is None:
            console = Console()
            if not console.is_terminal:  # logs: wide lines rather than wrapped ones
                console = Console(width=160)
        self.console = console
        self.live = self.console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._errors = 0
        self._tokens = 0
        self._t0 = 0.0

    def __enter__(self) -> SweepProgress:
        if self.live:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("errors {task.fields[errors]}"),
                TextColumn("{task.fields[tok_s]} tok/s"),
                TimeElapsedColumn(),
                console=self.console,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def message(self, text: str) -> None:
        """One terminal line; secrets in it (a URL's user-info, a key in an error) are hidden first."""
        self.console.print(redact_text(text), highlight=False, markup=False)

    def start_level(self, concurrency: int, requests: int, warmup: int) -> None:
        self._errors = 0
        self._tokens = 0
        self._t0 = time.monotonic()
        if self._progress is not None:
            self._task = self._progress.add_task(
                f"C={concurrency} ({warmup} warm-up + {requests})", total=warmup + requests, errors=0, tok_s="-"
            )
        else:
            self.message(f"level C={concurrency}: {requests} requests after {warmup} warm-up")

    def on_result(self, result: _Result) -> None:
        """Every result of the level, warm-up included (the bar counts both)."""
        if not result.ok:
            self._errors += 1
        self._tokens += result.output_tokens or 0
        if self._progress is not None and self._task is not None:
            elapsed = max(time.monotonic() - self._t0, 1e-9)
            self._progress.update(self._task, advance=1, errors=self._errors, tok_s=f"{self._tokens / elapsed:,.0f}")

    def end_level(self, level: Level | None) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.stop_task(self._task)
        self._task = None
        if level is not None and not self.live:
            self.message(level_line(level))

    def summary(self, record: Record, path: Path) -> None:
        self.__exit__()
        self.console.print(summary_table(record))
        for line in outcome_lines(record):
            self.message(line)
        self.message(f"record: {path}")
