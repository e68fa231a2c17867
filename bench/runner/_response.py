"""Reading one streamed response, whichever transport carried it: status, head, body bytes -> events -> state.

Both of :class:`bench.runner.client.StreamingClient`'s transports feed a :class:`ResponseReader` (it is a
:class:`bench.runner._http1.Sink`): the lean HTTP/1.1 one calls it from the connection's ``data_received`` with
one ``perf_counter_ns`` per socket read, taken before anything of that read is parsed; the httpx one calls it per
chunk its byte iterator yields, timestamped as the chunk comes out of httpx. The body of a response with status
>= 400 is kept (up to 64 KiB) for its error message; a 2xx body is decoded as Server-Sent Events and folded into a
:class:`bench.runner._stream.StreamState` (which may raise :class:`~bench.runner._stream.StreamError`).
"""

from __future__ import annotations

import json
import zlib

from ._sse import SSEDecoder
from ._stream import StreamError, StreamState
from .request import one_line

__all__ = ["ResponseReader", "error_text"]

_ERROR_BODY_LIMIT = 64 * 1024
_HEAD_KEEP = 200


class ResponseReader:
    """One response. ``decode_encoding``: undo a ``content-encoding`` (gzip, deflate) here; False where the
    transport has done it (httpx)."""

    __slots__ = (
        "_decode_encoding",
        "_decoder",
        "content_type",
        "error_body",
        "events",
        "first_bytes",
        "inflate",
        "sent_ns",
        "state",
        "status",
    )

    def __init__(self, api: str, *, keep_text: bool, decode_encoding: bool) -> None:
        self.state = StreamState(api, keep_text=keep_text)
        self._decoder = SSEDecoder()
        self._decode_encoding = decode_encoding
        self.status: int | None = None
        self.content_type = "none"
        self.sent_ns: int | None = None
        self.first_bytes = b""  # the first bytes of the body, for a diagnostic when it is not an event stream
        self.error_body: bytearray | None = None
        self.events = 0
        self.inflate: zlib._Decompress | None = None

    # -- the Sink protocol ---------------------------------------------------------------------------------
    def sent(self, now: int) -> None:
        if self.sent_ns is None:
            self.sent_ns = now

    def head(self, status: int, headers: dict[bytes, bytes]) -> None:
        self.status = status
        self.content_type = headers.get(b"content-type", b"none").decode("latin-1")
        if status >= 400:
            self.error_body = bytearray()
        if self._decode_encoding:
            encoding = headers.get(b"content-encoding", b"identity").strip().lower()
            if encoding in (b"gzip", b"x-gzip"):
                self.inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
            elif encoding == b"deflate":
                self.inflate = zlib.decompressobj()
            elif encoding not in (b"identity", b""):
                raise StreamError("bad_response", f"unsupported content-encoding {encoding.decode('latin-1')!r}")

    def body(self, now: int, data: bytes) -> None:
        if self.inflate is not None:
            try:
                data = self.inflate.decompress(data)
            except zlib.error as exc:
                message = f"DecodingError: the body fails its content-encoding: {exc}"
                raise StreamError("bad_response", message) from None
        if self.error_body is not None:
            if len(self.error_body) < _ERROR_BODY_LIMIT:
                self.error_body += data[: _ERROR_BODY_LIMIT - len(self.error_body)]
            return
        if len(self.first_bytes) < _HEAD_KEEP:
            self.first_bytes += data[: _HEAD_KEEP - len(self.first_bytes)]
        events = self._decoder.feed(data)
        if events:
            on_event = self.state.on_event
            for event in events:
                on_event(event, now)
            self.events += len(events)

    # -- after the body --------------------------------------------------------------------------------------
    def finish(self, now: int) -> tuple[str, str] | None:
        """The body is complete: the error ``(kind, message)`` it makes, or None (may raise StreamError)."""
        status = self.status
        if status is not None and status >= 400:
            raw = bytes(self.error_body or b"")
            return ("http_4xx" if status < 500 else "http_5xx"), f"HTTP {status}: {error_text(raw)}"
        for event in self._decoder.close():
            self.state.on_event(event, now)
            self.events += 1
        if self.events == 0:
            body = one_line(self.first_bytes.decode("utf-8", "replace"), 160) or "(empty body)"
            return "bad_response", (
                f"expected a text/event-stream of 'data:' events, got content-type {self.content_type}: {body}"
            )
        return None


def error_text(raw: bytes) -> str:
    """The message of an error body: the JSON ``error.message`` (or ``detail``/``msg``) where there is one."""
    text = raw.decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return one_line(text) or "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if key in err:
                    return one_line(str(err[key]))
        elif isinstance(err, str):
            return one_line(err)
    return one_line(text)
