"""The runs of one configuration: a record and its repeats (``bench run --repeat N``), pure.

Repeats are records that share the record's ``run_group``, variant and fingerprint. ``bench compare`` and the
site both pick a comparison side this way, so the rule lives here once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bench.record.model import Record

from ._context import fingerprint

__all__ = ["runs_of"]


def runs_of(
    record: Record, pool: Iterable[Record], *, fingerprint_of: Callable[[Record], str] = fingerprint
) -> list[Record]:
    """``record`` first, then every other record of ``pool`` with its run_group, variant and fingerprint.

    A record without a ``run_group`` has no repeats. ``fingerprint_of`` lets a caller pass a cached lookup.
    """
    if record.run_group is None:
        return [record]
    fp = fingerprint_of(record)
    others = [
        r
        for r in pool
        if r.id != record.id
        and r.run_group == record.run_group
        and r.variant == record.variant
        and fingerprint_of(r) == fp
    ]
    return [record, *others]
