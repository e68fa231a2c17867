"""Which records an added record is compared with, and the settings the comparisons use.

For an added record it picks, from the records already on the base branch,

* the latest COMPARABLE one: same experiment, same variant, same ``bench.compare.fingerprint``;
* if the record is a candidate, the latest record of the experiment's baseline variant (``benchbook.yaml``'s, else
  a variant named ``baseline``) that is comparable with it (no context difference beyond the experiment's
  treatment), or, when none is, the latest of that variant (the report then says the pair is not comparable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.record import Record
from bench.settings import Settings, SettingsError, load_settings

__all__ = ["Pairing", "baseline_variants", "gate_settings", "pairings"]


def gate_settings(repo_root: Path) -> tuple[Settings, str | None]:
    """The repository's ``benchbook.yaml`` (defaults without one); a bad file gives the defaults and its error,
    which the report states (the gate's verdict does not depend on it)."""
    try:
        return load_settings(root=repo_root), None
    except SettingsError as exc:
        return Settings(), str(exc)


def baseline_variants(settings: Settings) -> dict[str, str]:
    """experiment -> the baseline variant ``benchbook.yaml`` declares."""
    return {name: e.baseline for name, e in settings.experiments.items()}


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
    comparable: Callable[[Record, Record], bool] | None = None,
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
        of_baseline = [(p, r) for p, r in same_exp if r.variant == baseline]
        fits = [(p, r) for p, r in of_baseline if comparable(r, record)] if comparable is not None else []
        base = _latest(fits) or _latest(of_baseline)
        out.append(
            Pairing("baseline", base[0], base[1])
            if base
            else Pairing("baseline", None, None, f"no record of the baseline variant '{baseline}' on the base branch")
        )
    return out
