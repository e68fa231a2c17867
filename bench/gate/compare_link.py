"""The bridge to ``bench.compare``, looked up at call time so the gate works before (and without) it.

For an added record it picks, from the records already on the base branch,
* the latest COMPARABLE one: same experiment, same variant, same ``bench.compare.fingerprint``;
* if the record is a candidate, the latest record of the experiment's baseline variant
  (from ``benchbook.yaml`` via ``bench.compare.settings`` when available; else a variant named ``baseline``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.record import Record

__all__ = ["CompareApi", "Pairing", "baseline_variants", "load_compare_api", "pairings"]


@dataclass(frozen=True)
class CompareApi:
    compare_records: Callable[..., Any]
    render_json: Callable[[Any], dict[str, Any]]  # the report reads the comparison's JSON form only
    fingerprint: Callable[[Record], str]
    flags: Callable[..., list[Any]] | None  # flags(history, thresholds) for one configuration
    settings: Any  # bench.compare.Settings, or None (defaults)
    settings_error: str | None
    module: ModuleType


def load_compare_api(repo_root: Path) -> CompareApi | None:
    """``bench.compare``'s public functions and the repository's settings, or None without the package."""
    try:
        mod = importlib.import_module("bench.compare")
    except ModuleNotFoundError as exc:
        if exc.name is not None and "bench.compare".startswith(exc.name):
            return None
        raise
    needed = ("compare_records", "render_comparison_json", "fingerprint")
    if not all(hasattr(mod, n) for n in needed):
        return None
    settings, error = None, None
    path = repo_root / "benchbook.yaml"
    loader = getattr(mod, "load_settings", None)
    if loader is not None and path.is_file():
        try:
            settings = loader(path)
        except Exception as exc:  # SettingsError names the file and field; report it, compare with defaults
            error = str(exc)
    return CompareApi(
        compare_records=mod.compare_records,
        render_json=mod.render_comparison_json,
        fingerprint=mod.fingerprint,
        flags=getattr(mod, "flags", None),
        settings=settings,
        settings_error=error,
        module=mod,
    )


def baseline_variants(api: CompareApi | None, repo_root: Path) -> dict[str, str]:
    """experiment -> baseline variant, from the loaded settings, else read leniently from ``benchbook.yaml``."""
    if api is not None and api.settings is not None:
        experiments = getattr(api.settings, "experiments", {}) or {}
        return {str(k): str(v.baseline) for k, v in experiments.items() if getattr(v, "baseline", None)}
    import yaml

    try:
        data = yaml.safe_load((repo_root / "benchbook.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    exps = data.get("experiments") if isinstance(data, dict) else None
    if not isinstance(exps, dict):
        return {}
    return {
        str(k): str(v.get("baseline"))
        for k, v in exps.items()
        if isinstance(v, dict) and isinstance(v.get("baseline"), str)
    }


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
