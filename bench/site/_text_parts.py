"""A generated file given as the way to make its text, in parts (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

__all__ = ["KeyedPart", "TextParts"]

KeyedPart = tuple[str | None, Callable[[], str]]
"""One part of a file: a key that names everything its text is made from (None: no such key), and how to make it."""


class TextParts:
    """A generated file given as the way to make its text, in parts, in order: for the rows of every record (about
    25 kB of CSV and 18 kB of JSON per record: 430 MB at 10,000 records, held three times over while one string was
    encoded and compared), and for each record's downloads, which ``key`` names by everything they are made from
    (a build that made the same key before need not make the text again). Iterating makes the parts afresh each
    time; ``str()`` joins them.

    ``keyed``: the parts as :data:`KeyedPart` (each named by what it is made from), so that a file that changed in
    some parts only is written with the others' bytes taken from the last file made so, not made again
    (``bench.site.Outputs.keep_joined``: a ``mkdocs serve`` rebuild after one new record at 10,000 records spent 3.5
    s decompressing every record's part of the two every-record downloads)."""

    def __init__(
        self,
        parts: Callable[[], Iterable[str]] | None = None,
        key: str | None = None,
        *,
        large: bool = False,
        keyed: Callable[[], Iterable[KeyedPart]] | None = None,
    ) -> None:
        if (parts is None) == (keyed is None):
            raise ValueError("TextParts needs its parts, either plain or keyed")
        self._parts = parts
        self._keyed = keyed
        self.key = key
        self.large = large  # never to be held whole

    def keyed_parts(self) -> Iterator[KeyedPart]:
        """The parts, each with its key (None for every part of plain parts) and how to make its text."""
        if self._keyed is not None:
            return iter(self._keyed())
        assert self._parts is not None
        return ((None, _given(part)) for part in self._parts())

    def __iter__(self) -> Iterator[str]:
        if self._parts is not None:
            return iter(self._parts())
        return (make() for _, make in self.keyed_parts())

    def __str__(self) -> str:
        return "".join(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextParts | str):
            return str(self) == str(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _given(text: str) -> Callable[[], str]:
    return lambda: text
