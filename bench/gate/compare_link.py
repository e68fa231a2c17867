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
    render_markdown: Callable[[Any], str]
    render_json: Callable[[Any], dict[str, Any]]
    fingerprint: Callable[[Record], str]
    regression_flags: Callable[..., Any] | None
    module: ModuleType


def load_compare_api() -> CompareApi | None:
    """``bench.compare``'s public functions, or None when the package is not there (yet)."""
    try:
        mod = importlib.import_module("bench.compare")
    except ModuleNotFoundError as exc:
        if exc.name is not None and "bench.compare".startswith(exc.name):
            return None
        raise
    needed = ("compare_records", "render_comparison_markdown", "render_comparison_json", "fingerprint")
    if not all(hasattr(mod, n) for n in needed):
        return None
    return CompareApi(
        compare_records=mod.compare_records,
        render_markdown=mod.render_comparison_markdown,
        render_json=mod.render_comparison_json,
        fingerprint=mod.fingerprint,
        regression_flags=getattr(mod, "regression_flags", None),
        module=mod,
    )


def baseline_variants(repo_root: Path) -> dict[str, str]:
    """experiment -> baseline variant, from ``benchbook.yaml``; {} when none is declared."""
    path = repo_root / "benchbook.yaml"
    if not path.is_file():
        return {}
    try:
        settings_mod = importlib.import_module("bench.compare.settings")
    except ModuleNotFoundError:
        settings_mod = None
    loader = getattr(settings_mod, "load_settings", None) if settings_mod is not None else None
    if loader is not None:
        settings = loader(path)
        experiments = getattr(settings, "experiments", {}) or {}
        out: dict[str, str] = {}
        for name, exp in experiments.items():
            variant = getattr(exp, "baseline", None) or getattr(exp, "baseline_variant", None)
            if isinstance(variant, str):
                out[str(name)] = variant
        return out
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
