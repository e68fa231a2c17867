"""What every importer makes: a :class:`Run` per load level, runs grouped into sweeps, one record per sweep."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.errors import from_validation_error
from bench.record import Level, Metric, Record, RecordError, new_record_id

__all__ = ["Run", "build_records", "dist", "group_runs", "slug"]


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return s or "imported"


def dist(
    unit: str,
    formula: str,
    *,
    n: int | None = None,
    note: str | None = None,
    source: str | None = None,
    **figures: float | None,
) -> Metric | None:
    """A Metric from the figures the source states; None when it states none of value/mean/p50/p90/p99.

    Figures are finite: the source reader refused NaN and Infinity at their field, and the schema refuses them too.
    """
    figs = {k: v for k, v in figures.items() if v is not None}
    if not any(k in figs for k in ("value", "mean", "p50", "p90", "p99")):
        return None
    return Metric(unit=unit, formula=formula, n=n, note=note, source=source, **figs)


@dataclass
class Run:
    """One load level of a source file, with everything needed to group it and build its record."""

    source: Path
    locator: str  # "line 3", "benchmarks[1]", ...
    tool: str
    tool_version: str | None
    config: dict[str, Any]  # everything that identifies the configuration, concurrency excluded
    level: Level
    engine: str = "unknown"
    engine_version: str | None = None
    model: str | None = None
    prompt_set: str | None = None
    prompt_set_description: str | None = None
    num_prompts: int | None = None
    api: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    measured_at: datetime | None = None
    server_info: dict[str, Any] | None = None
    server_args: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def group_key(self) -> str:
        return json.dumps(
            {"tool": self.tool, "engine": self.engine, "model": self.model, "config": self.config},
            sort_keys=True,
            default=str,
        )


def group_runs(runs: Sequence[Run]) -> list[list[Run]]:
    """Runs that share everything but concurrency form one sweep, levels sorted by concurrency.

    A second run at a concurrency its group already has starts a new group (two records, not one level twice).
    """
    groups: list[list[Run]] = []
    open_by_key: dict[str, list[list[Run]]] = {}
    for run in runs:
        candidates = open_by_key.setdefault(run.group_key, [])
        target = next((g for g in candidates if all(r.level.key != run.level.key for r in g)), None)
        if target is None:
            target = []
            candidates.append(target)
            groups.append(target)
        target.append(run)
    for g in groups:
        g.sort(key=lambda r: (r.level.concurrency is None, r.level.concurrency or 0, r.level.key))
    return groups


def _cite(group: Sequence[Run]) -> str:
    by_file: dict[str, list[str]] = {}
    for r in group:
        by_file.setdefault(r.source.name, []).append(r.locator)
    return "; ".join(f"{name} ({', '.join(locs)})" for name, locs in by_file.items())


def build_records(
    groups: Sequence[Sequence[Run]], *, experiment: str, variant: str | None, now: datetime | None = None
) -> list[Record]:
    """One record per group. ``variant`` is used as given (the command line checks it); without one, the engine's
    (else the tool's) name. A value the schema refuses (a text over its cap) raises RecordError naming the file."""
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    out: list[Record] = []
    for group in groups:
        first = group[0]
        var = variant or slug(first.engine if first.engine != "unknown" else first.tool.split()[0])
        try:
            out.append(_record(group, experiment=experiment, variant=var, now=now))
        except ValidationError as exc:
            raise from_validation_error(RecordError, first.source, exc) from None
    return out


def _record(group: Sequence[Run], *, experiment: str, variant: str, now: datetime) -> Record:
    """Validated as one document, so an error names its place in the record (``provenance.notes``)."""
    first = group[0]
    notes = [n for r in group for n in r.notes]
    measured = [r.measured_at for r in group if r.measured_at is not None]
    tool = f"{first.tool} {first.tool_version}" if first.tool_version else first.tool
    complete = all((r.level.requests_completed or 0) > 0 for r in group)
    return Record.model_validate(
        {
            "id": new_record_id(variant, now, salt=first.group_key),
            "experiment": experiment,
            "variant": variant,
            "title": f"Imported from {first.tool}: {first.source.name}",
            "created_at": now,
            "provenance": {
                "kind": "imported",
                "source": _cite(group),
                "tool": tool,
                "measured_at": min(measured) if measured else None,
                "notes": " ".join(dict.fromkeys(notes)) or None,
            },
            "server": {
                "engine": first.engine,
                "version": first.engine_version,
                "args": first.server_args,
                "server_info": first.server_info,
                "notes": [f"imported from {tool}; the launch command is not in the source"],
            },
            "model": {"name": first.model},
            "workload": {
                "prompt_set": first.prompt_set or "not stated",
                "prompt_set_description": first.prompt_set_description,
                "num_prompts": first.num_prompts,
                "api": first.api,
                "max_tokens": first.max_tokens,
                "temperature": first.temperature,
                "planned_levels": [r.level.concurrency for r in group if r.level.concurrency is not None] or None,
            },
            "levels": [r.level for r in group],
            "status": {
                "state": "complete" if complete else "partial",
                "message": f"{len(group)} run(s) imported from {tool}"
                + ("" if complete else "; at least one run completed no request"),
            },
            "tags": ["imported", slug(first.tool.split()[0])],
        }
    )
