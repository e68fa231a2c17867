"""A generated file given as the way to make its text, in parts (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

__all__ = ["TextParts"]


class TextParts:
    """A generated file given as the way to make its text, in parts, in order: for the rows of every record (about
    25 kB of CSV and 18 kB of JSON per record: 430 MB at 10,000 records, held three times over while one string was
    encoded and compared), and for each record's downloads, which ``key`` names by everything they are made from
    (a build that made the same key before need not make the text again). Iterating makes the parts afresh each
    time; ``str()`` joins them."""

    def __init__(self, parts: Callable[[], Iterable[str]], key: str | None = None, *, large: bool = False) -> None:
        self._parts = parts
        self.key = key
        self.large = large  # never to be held whole

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts())

    def __str__(self) -> str:
        return "".join(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextParts | str):
            return str(self) == str(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
