"""One shortcode call (pure): its page, its arguments and the checks every handler uses; the records a comparison
shortcode names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bench.record.model import Record

from ._escape import md_text
from ._markup import admonition
from ._paths import RECORD_ID_PATTERN
from ._site_data import SiteData

__all__ = ["BadArgs", "Call", "missing", "no_experiment", "pair"]

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_RECORD_ID = re.compile(RECORD_ID_PATTERN)


class BadArgs(Exception):
    """A shortcode used wrongly (the build fails, naming the page and line)."""


@dataclass(frozen=True)
class Call:
    site: SiteData
    page: str
    args: dict[str, str]

    def slug(self, key: str) -> str:
        v = self.args[key]
        if not _SLUG.match(v):
            raise BadArgs(f"{key}={v!r} is not an experiment/variant name (lowercase letters, digits, . _ -)")
        return v

    def int(self, key: str, default: int, lo: int = 1, hi: int = 1000) -> int:
        if key not in self.args:
            return default
        try:
            v = int(self.args[key])
        except ValueError:
            raise BadArgs(f"{key}={self.args[key]!r} is not a whole number") from None
        if not lo <= v <= hi:
            raise BadArgs(f"{key}={v} is outside {lo}..{hi}")
        return v


def missing(what: str) -> str:
    return admonition("warning", "Nothing to show", f"{md_text(what)} No figures are shown here.")


def no_experiment(c: Call, exp: str) -> str | None:
    if exp not in c.site.experiments:
        return missing(f"There are no records of experiment '{exp}' in this build.")
    return None


def _pick(c: Call, exp: str, key: str) -> Record | None:
    v = c.args.get(key) if key != "baseline" else c.args.get(key, c.site.baseline_variant(exp))
    if v is None:
        return None
    if _RECORD_ID.match(v):
        loaded = c.site.by_id.get(v)
        return loaded.record if loaded is not None and loaded.record.experiment == exp else None
    if key in c.args:
        c.slug(key)
    for r in c.site.latest_per_variant(exp):
        if r.variant == v:
            return r
    return None


def _pair_by_ids(c: Call) -> tuple[Record, Record] | str:
    """Two records named by id, from any experiments (``experiment`` left out): e.g. two engines side by side."""
    ids = (c.args.get("baseline", ""), c.args.get("candidate", ""))
    if not all(_RECORD_ID.match(v) for v in ids):
        raise BadArgs("without experiment=, give baseline= and candidate= as record ids")
    a, b = (c.site.by_id.get(v) for v in ids)
    if a is None or b is None:
        gone = [v for v, r in zip(ids, (a, b), strict=True) if r is None]
        return missing(f"No record {', '.join(repr(v) for v in gone)} in this build.")
    return a.record, b.record


def pair(c: Call) -> tuple[Record, Record] | str:
    """The (baseline, candidate) records a comparison shortcode names, or the visible box saying what is missing."""
    if "experiment" not in c.args:
        return _pair_by_ids(c)
    exp = c.slug("experiment")
    if (none := no_experiment(c, exp)) is not None:
        return none
    base, cand = _pick(c, exp, "baseline"), _pick(c, exp, "candidate")
    if base is None and "baseline" not in c.args and c.site.baseline_variant(exp) is None:
        return missing(
            f"Experiment '{exp}' has no baseline variant (benchbook.yaml names none; none is called baseline)."
        )
    if base is None or cand is None:
        which = c.args.get("baseline", c.site.baseline_variant(exp)) if base is None else c.args["candidate"]
        return missing(f"No record '{which}' in experiment '{exp}' in this build.")
    return base, cand
