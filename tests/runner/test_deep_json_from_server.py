"""A server's body or stream event nested deeper than the JSON parser goes (3.11's gives up near 1,000 levels with
a RecursionError; 3.13's reads 5,000) is a bad response on every Python, not an exception out of the client."""

from __future__ import annotations

import pytest

from bench.runner._response import error_text
from bench.runner._sse import SSEEvent
from bench.runner._stream import StreamError, StreamState

DEEP = "[" * 50_000 + "]" * 50_000
DEEPISH = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize("data", [DEEP, DEEPISH, '{"error": ' + DEEPISH + "}"])
@pytest.mark.parametrize("api", ["chat", "generate"])
def test_a_deeply_nested_event_is_a_bad_response(api: str, data: str) -> None:
    state = StreamState(api, keep_text=False)
    with pytest.raises(StreamError) as info:
        state.on_event(SSEEvent(data=data), 0)
    assert info.value.kind in {"bad_response", "stream_broken"}
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("body", [DEEP, DEEPISH])
def test_a_deeply_nested_error_body_is_quoted_cut_short(body: str) -> None:
    text = error_text(body.encode())
    assert text.startswith("[[[") and len(text) < 400
