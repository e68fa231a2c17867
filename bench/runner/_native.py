"""SGLang's native ``/generate`` stream: one chunk's figures without re-reading what earlier chunks said.

By default SGLang streams *cumulatively*: every chunk repeats the whole text and every ``output_ids`` so far
(``{"text": "…", "output_ids": [7042, 30, …], "meta_info": {…}}``, ``meta_info`` last; SGLang 0.5.17, see
``tests/runner/fixtures/sglang/``). With ``--incremental-streaming-output`` a chunk carries only the new text and
ids. Decoding each cumulative chunk whole (``json.loads``) builds the text and a list of every id again on every
chunk: Python work quadratic in the output length. :func:`split_chunk` instead

* decodes only ``meta_info`` (the last key: found from the end of the chunk, its size does not grow), and
* counts the elements of ``output_ids`` between its brackets (a C-level scan for ``[`` and a count of ``,``,
  no Python object per id), without touching the text at all.

So the Python work per chunk is constant and the work per request linear in its tokens; what stays quadratic
in cumulative mode is only moving the bytes the server chose to send (socket, SSE lines, UTF-8), in C.
:class:`IdsCounter` turns the element counts into new tokens per chunk, telling cumulative from incremental
streams (``meta_info.completion_tokens`` is cumulative in both modes; without it, whether a chunk's ids start
with the previous chunk's ids). A chunk in any other layout returns None: the caller decodes it whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["IdsCounter", "NativeChunk", "StreamMode", "split_chunk"]

StreamMode = Literal["cumulative", "incremental"]

_HEAD = '{"text"'
_META = '"meta_info"'
_IDS = '"output_ids"'
_SPACE = " \t\r\n"


@dataclass(frozen=True, slots=True)
class NativeChunk:
    meta: dict[str, Any]
    ids: int  # elements of output_ids counted: all of them, or only those after `skipped` characters
    skipped: int  # characters at the start of output_ids not looked at (0: the whole array was counted)
    ids_span: tuple[int, int]  # where output_ids' elements are in the chunk's text (between the brackets)
    decoded_chars: int  # characters decoded into Python objects (meta_info only)


def _back(s: str, i: int) -> int:
    """The index of the last non-space character at or before ``i`` (-1 if none)."""
    while i >= 0 and s[i] in _SPACE:
        i -= 1
    return i


def _forward(s: str, i: int, stop: int) -> int:
    """The index of the first non-space character at or after ``i`` (``stop`` if none before it)."""
    while i < stop and s[i] in _SPACE:
        i += 1
    return i


def _ids_start(data: str, close: int, skip: int) -> int:
    """The index of output_ids' ``[`` (-1: not an output_ids array). With ``skip``, the array is known to hold at
    least ``skip`` characters, so the backward search starts before them."""
    start = data.rfind("[", 0, close - skip)  # passes over digits, commas and spaces only
    colon = _back(data, start - 1) if start >= 0 else -1
    name_end = _back(data, colon - 1) if colon >= 0 and data[colon] == ":" else -1
    if name_end < 0 or not data.endswith(_IDS, 0, name_end + 1):
        return -1  # e.g. a nested list, or a wrong skip that landed in the text
    return start


def split_chunk(data: str, skip: int = 0) -> NativeChunk | None:
    """``meta_info`` and the ``output_ids`` count of one SGLang chunk laid out as SGLang writes it
    (``{"text": …, "output_ids": […], "meta_info": {…}}``, any spacing); None for any other layout.

    ``skip``: in a cumulative stream, the length of the previous chunk's ids text, which this chunk repeats:
    only the ids after it are searched and counted. A chunk that does not continue there is counted whole.
    """
    if not data.startswith(_HEAD):
        return None
    end = _back(data, len(data) - 1)
    if end < 0 or data[end] != "}":
        return None
    key = data.rfind(_META)  # from the end: passes over meta_info only
    if key < 0:
        return None
    colon = _forward(data, key + len(_META), end)
    if colon >= end or data[colon] != ":":
        return None
    body = data[colon + 1 : end]
    try:
        meta = json.loads(body)  # meta_info must be the last key: anything after it makes this fail
    except ValueError:
        return None
    if not isinstance(meta, dict):
        return None
    comma = _back(data, key - 1)
    close = _back(data, comma - 1) if comma >= 0 and data[comma] == "," else -1
    if close < 0 or data[close] != "]":
        return None
    if skip > 0:
        start = _ids_start(data, close, skip) if close - skip > 0 else -1
        if start >= 0:
            rest = _forward(data, start + 1 + skip, close)
            if rest == close:  # nothing new
                return NativeChunk(meta, 0, skip, (start + 1, close), len(body))
            if data[rest] == ",":
                new = data.count(",", rest, close)
                return NativeChunk(meta, new, skip, (start + 1, close), len(body))
    start = _ids_start(data, close, 0)
    if start < 0:
        return None
    ids = 0 if _forward(data, start + 1, close) == close else data.count(",", start + 1, close) + 1
    return NativeChunk(meta=meta, ids=ids, skipped=0, ids_span=(start + 1, close), decoded_chars=len(body))


class IdsCounter:
    """New tokens per chunk from the growth of ``output_ids``, cumulative or incremental.

    The mode is decided at the first chunk with ids after some were seen: with ``completion_tokens``
    (cumulative in both modes), ids == completion_tokens means cumulative; without it, whether the chunk's ids
    start with the previous chunk's ids (their text is kept only until the mode is known). Once the stream is
    known to be cumulative, :attr:`skip` tells :func:`split_chunk` how much of the next chunk's ids to pass over.
    """

    __slots__ = ("_previous", "mode", "seen", "skip")

    def __init__(self) -> None:
        self.seen = 0  # output ids received so far
        self.mode: StreamMode | None = None
        self.skip = 0
        self._previous: str | None = None

    def wants_text(self, completion_tokens: int | None) -> bool:
        """Whether :meth:`new_tokens` needs the ids' text for this chunk (rarely: mode unknown, no count)."""
        return self.mode is None and completion_tokens is None

    def update(self, chunk: NativeChunk, completion_tokens: int | None, ids_text: str | None = None) -> int:
        """Tokens this chunk adds (a chunk from :func:`split_chunk` with ``skip=self.skip``)."""
        span = chunk.ids_span[1] - chunk.ids_span[0]
        if chunk.skipped:
            new = chunk.ids
            self.seen += new
        else:
            new = self.new_tokens(chunk.ids, completion_tokens, ids_text)
        self.skip = span if self.mode == "cumulative" else 0
        return new

    def new_tokens(self, ids: int, completion_tokens: int | None, ids_text: str | None = None) -> int:
        """Tokens this chunk adds; ``ids`` is the length of its whole ``output_ids``."""
        if self.mode is None and self.seen > 0 and ids > 0:
            self.mode = self._decide(ids, completion_tokens, ids_text)
        new = ids if self.mode == "incremental" else max(0, ids - self.seen)
        self.seen += new
        self._previous = ids_text if self.mode is None and ids_text is not None else None
        return new

    def _decide(self, ids: int, completion_tokens: int | None, ids_text: str | None) -> StreamMode:
        if completion_tokens is not None:
            if ids == completion_tokens:
                return "cumulative"
            if ids == completion_tokens - self.seen:
                return "incremental"
        elif ids_text is not None and self._previous is not None:
            return "cumulative" if ids >= self.seen and ids_text.startswith(self._previous) else "incremental"
        return "cumulative" if ids >= self.seen else "incremental"
