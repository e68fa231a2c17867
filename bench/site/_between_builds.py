"""What one build of a long-lived process leaves for the next (``mkdocs serve`` rebuilds the site after each change
in the same process): one definition for every kind of result a build may carry over (loaded records, regression
flags, generated pages' Markdown), each in a :class:`Carried` store (pure; no MkDocs).

Off by default (``mkdocs build``: one build per process, nothing to carry); :func:`keep_loaded_records` turns it on
for the process. A store holds two builds' results at most: what the last build made or took (:meth:`Carried.get`
looks there) and what this one makes or takes (:meth:`Carried.put`, and every hit of :meth:`Carried.get`); its
owner calls :meth:`Carried.turn` once at the start of each build, so a result no build asked for again is dropped,
and the memory held is one site's. A key names everything its value is made from (a record file's bytes, a
configuration's record digests and thresholds, a page's inputs), so a value found under it is the one the build
would make.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Carried", "keep_loaded_records"]

K = TypeVar("K")
V = TypeVar("V")


class _Switch:
    on = False


_SWITCH = _Switch()
_STORES: list[Carried[object, object]] = []


class Carried(Generic[K, V]):
    """One kind of result carried from build to build (see the module's docstring)."""

    def __init__(self) -> None:
        self._last: dict[K, V] = {}
        self._now: dict[K, V] = {}
        _STORES.append(self)  # type: ignore[arg-type]

    def __contains__(self, key: K) -> bool:
        """Whether the last build left a value under ``key`` (not taken)."""
        return _SWITCH.on and key in self._last

    def get(self, key: K) -> V | None:
        """The value the last build left under ``key`` (None: none, or carrying is off); kept for the next build."""
        if not _SWITCH.on:
            return None
        found = self._last.get(key)
        if found is not None:
            self._now[key] = found
        return found

    def put(self, key: K, value: V) -> None:
        """Leave ``value`` under ``key`` for the next build (nothing while carrying is off)."""
        if _SWITCH.on:
            self._now[key] = value

    def turn(self) -> None:
        """A new build: what the last one left is what the one before it made or took."""
        self._last, self._now = self._now, {}

    def clear(self) -> None:
        self._last, self._now = {}, {}


def keep_loaded_records(on: bool = True) -> None:
    """Carry each build's results to the next build of this process (``mkdocs serve``): a record file whose path
    and bytes are unchanged is then neither read from the site cache nor unpickled again, its lean record and rows
    taken as they are (never changed once loaded); a configuration's flags and a page's Markdown whose inputs are
    unchanged are taken as the last build made them. Off: every store forgets."""
    _SWITCH.on = on
    if not on:
        for store in _STORES:
            store.clear()
