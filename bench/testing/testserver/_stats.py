"""What the test server really did: when it wrote each chunk (:class:`StreamLog`), how late its timers woke, how many
streams it held at once (:class:`ServerStats`, served at ``GET /stats``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_LATENESS_SAMPLES", "MAX_STREAM_LOGS", "ServerStats", "StreamLog"]

MAX_LATENESS_SAMPLES = 2_000_000
MAX_STREAM_LOGS = 10_000


@dataclass
class StreamLog:
    """What the server really did for one streamed request, on ``time.perf_counter_ns`` (CLOCK_MONOTONIC on
    Linux, so comparable with a client's timestamps, even across processes)."""

    api: str
    t0_ns: int  # request body read: the schedule's origin
    emit_ns: list[int] = field(default_factory=list)  # just before each content chunk was written
    chunk_tokens: list[int] = field(default_factory=list)


@dataclass
class ServerStats:
    requests: int = 0
    connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    chunks: int = 0
    lateness_ns: list[int] = field(default_factory=list)
    streams: list[StreamLog] = field(default_factory=list)  # the first MAX_STREAM_LOGS streams

    def as_json(self) -> dict[str, Any]:
        late = sorted(self.lateness_ns)

        def q(p: float) -> float | None:
            return late[min(len(late) - 1, int(p * len(late)))] / 1e6 if late else None

        return {
            "requests": self.requests,
            "connections": self.connections,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "chunks": self.chunks,
            "streams_logged": len(self.streams),
            "lateness_ms": {"n": len(late), "p50": q(0.5), "p99": q(0.99), "max": late[-1] / 1e6 if late else None},
        }
