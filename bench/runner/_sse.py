"""An incremental Server-Sent Events decoder (WHATWG event-stream rules), fed raw bytes as they arrive.

* lines end in CRLF, LF or CR, and a CRLF may be split across two reads;
* ``:`` starts a comment line (keep-alive pings), ignored;
* several ``data:`` lines form one event, joined with ``\\n``; a blank line dispatches it;
* ``event:`` sets the event's type; ``id:`` and ``retry:`` are accepted and ignored;
* a chunk may end in the middle of a line or of a multi-byte character: nothing is decoded until its line is
  complete.

At the end of the stream :meth:`SSEDecoder.close` returns an event left without its final blank line
(servers that omit it exist; the WHATWG rule would drop it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str | None = None


class SSEDecoder:
    __slots__ = ("_buf", "_data", "_event")

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []
        self._event: bytes | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completed, in order."""
        buf = self._buf + chunk if self._buf else chunk
        hold = b""
        if b"\r" in buf:
            if buf.endswith(b"\r"):  # may be the first half of a CRLF split across reads
                buf, hold = buf[:-1], b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._buf = lines.pop() + hold
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:  # the two common lines inline ("data: ..." and the blank line after it), _line the rest
            if line[:6] == b"data: ":
                data.append(line[6:])
            elif not line and self._event is None:
                if data:
                    joined = data[0] if len(data) == 1 else b"\n".join(data)
                    events.append(SSEEvent(joined.decode("utf-8", "replace")))
                    data.clear()
            else:
                self._line(line, events)
                data = self._data
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: finish a last line and a last event that lack their terminators."""
        events: list[SSEEvent] = []
        rest, self._buf = self._buf, b""
        if rest:
            for line in rest.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
                self._line(line, events)
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                event = None if self._event is None else self._event.decode("utf-8", "replace")
                events.append(SSEEvent(b"\n".join(self._data).decode("utf-8", "replace"), event))
            self._data = []
            self._event = None
            return
        if line[0] == 0x3A:  # ":" comment
            return
        if line.startswith(b"data:"):  # the common case, with one copy of a value that may be large
            self._data.append(line[6:] if line[5:6] == b" " else line[5:])
            return
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        # "id", "retry" and unknown fields are ignored, as the standard says
