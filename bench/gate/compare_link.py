"""The bridge to ``bench.compare``: the functions the report calls and the repository's settings.

For an added record it picks, from the records already on the base branch,
* the latest COMPARABLE one: same experiment, same variant, same ``bench.compare.fingerprint``;
* if the record is a candidate, the latest record of the experiment's baseline variant
  (from ``benchbook.yaml``, read by ``bench.settings``; else a variant named ``baseline``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import bench.compare
from bench.record import Record
from bench.settings import Settings, SettingsError, load_settings

__all__ = ["CompareApi", "Pairing", "baseline_variants", "load_compare_api", "pairings"]


@dataclass(frozen=True)
class CompareApi:
    compare_records: Callable[..., Any]
    render_json: Callable[[Any], dict[str, Any]]  # the report reads the comparison's JSON form only
    fingerprint: Callable[[Record], str]
    flags: Callable[..., list[Any]] | None  # flags(history, thresholds) for one configuration
    settings: Settings  # the repository's benchbook.yaml, or the defaults when it is missing or bad
    settings_error: str | None  # why the repository's benchbook.yaml could not be used
    module: ModuleType


def load_compare_api(repo_root: Path) -> CompareApi:
    """``bench.compare``'s public functions and the repository's settings (a bad ``benchbook.yaml`` is reported in
    ``settings_error``, and the comparisons use the defaults)."""
    try:
        settings, error = load_settings(root=repo_root), None
    except SettingsError as exc:
        settings, error = Settings(), str(exc)
    mod = bench.compare
    return CompareApi(
        compare_records=mod.compare_records,
        render_json=mod.render_comparison_json,
        fingerprint=mod.fingerprint,
        flags=mod.flags,
        settings=settings,
        settings_error=error,
        module=mod,
    )


def baseline_variants(api: CompareApi | None, repo_root: Path) -> dict[str, str]:
    """experiment -> baseline variant, from the repository's settings (none from a bad ``benchbook.yaml``)."""
    settings = (api if api is not None else load_compare_api(repo_root)).settings
    return {name: exp.baseline for name, exp in settings.experiments.items()}


@dataclass(frozen=True)
class Pairing:
    kind: str  # "previous" (same configuration) or "baseline" (the experiment's baseline variant)
    against_path: str | None
    against: Record | None
    note: str | None = None


def _latest(cands: list[tuple[str, Record]]) -> tuple[str, Record] | None:
    return max(cands, key=lambda pr: (pr[1].created_at, pr[1].id)) if cands else None


def pairings(
    record: Record,
    base_records: Mapping[str, Record],
    fingerprint: Callable[[Record], str],
    baselines: Mapping[str, str],
) -> list[Pairing]:
    same_exp = [(p, r) for p, r in base_records.items() if r.experiment == record.experiment]
    fp = fingerprint(record)
    prev = _latest([(p, r) for p, r in same_exp if r.variant == record.variant and fingerprint(r) == fp])
    out = [
        Pairing("previous", prev[0], prev[1])
        if prev
        else Pairing("previous", None, None, "no earlier record of this configuration (same fingerprint and variant)")
    ]
    baseline = baselines.get(record.experiment, "baseline" if record.variant != "baseline" else None)
    if baseline is not None and baseline != record.variant:
        base = _latest([(p, r) for p, r in same_exp if r.variant == baseline])
        out.append(
            Pairing("baseline", base[0], base[1])
            if base
            else Pairing("baseline", None, None, f"no record of the baseline variant '{baseline}' on the base branch")
        )
    return out
