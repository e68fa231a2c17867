"""A bare client that only counts: the ceiling a Python client on one event loop can reach against a server.

Standard library only (asyncio protocols on keep-alive HTTP/1.1 connections): ``concurrency`` connections each
send a prebuilt request, count the ``data:`` events of the chunked SSE answer with ``bytes.count`` and send the
next request when the answer's last chunk (``0\\r\\n\\r\\n``) arrives. No JSON is decoded, no timestamp taken per
event, nothing is checked but the status line: what is left is the least work any streaming client must do.
It speaks to servers that answer with ``transfer-encoding: chunked`` (benchbook's test server does).

    python bare_client.py --url http://127.0.0.1:PORT --concurrency 64 --requests 256 --out result.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

_END = b"\r\n0\r\n\r\n"
_DATA = b"\ndata: "


class _Conn(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future[tuple[int, bool]] | None = None
        self.events = 0
        self.tail = b""
        self.status_ok: bool | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bool]]:
        assert self.transport is not None
        self.done = asyncio.get_running_loop().create_future()
        self.events, self.tail, self.status_ok = 0, b"", None
        self.transport.write(request)
        return self.done

    def data_received(self, data: bytes) -> None:
        if self.status_ok is None:
            self.status_ok = data.startswith(b"HTTP/1.1 200")
        joined = self.tail + data
        # events start after a blank line ("\n\ndata: ") or at the body's first chunk ("\r\ndata: ")
        self.events += joined.count(_DATA) - self.tail.count(_DATA)
        self.tail = joined[-16:]
        if self.tail.endswith(_END) and self.done is not None and not self.done.done():
            self.done.set_result((self.events, bool(self.status_ok)))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result((self.events, False))


async def run(args: argparse.Namespace) -> dict[str, object]:
    parts = urlsplit(args.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    body = json.dumps(
        {
            "prompt": "bare client",
            "max_tokens": args.max_tokens,
            "temperature": 0.0,
            "stream": True,
            "ignore_eos": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        }
    ).encode()
    request = (
        f"POST /v1/completions HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
        f"accept: text/event-stream\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    loop = asyncio.get_running_loop()
    conns = [(await loop.create_connection(_Conn, host, port))[1] for _ in range(args.concurrency)]
    counts = {"ok": 0, "failed": 0, "events": 0}
    first: list[int] = []
    last = [0]

    async def worker(conn: _Conn, queue: list[int], measured: bool) -> None:
        while queue:
            queue.pop()
            if measured and not first:
                first.append(time.perf_counter_ns())
            events, ok = await conn.send(request)
            if measured:
                counts["ok" if ok else "failed"] += 1
                counts["events"] += events
                last[0] = time.perf_counter_ns()
            if not ok:
                return

    warm = list(range(args.warmup))
    await asyncio.gather(*(worker(c, warm, False) for c in conns))
    todo = list(range(args.requests))
    await asyncio.gather(*(worker(c, todo, True) for c in conns))
    for c in conns:
        if c.transport is not None:
            c.transport.close()
    window = (last[0] - first[0]) / 1e9 if first else 0.0
    return {
        "client": "bare",
        "requests": args.requests,
        "ok": counts["ok"],
        "failed": counts["failed"] + args.requests - counts["ok"] - counts["failed"],
        "events": counts["events"],
        "window_s": window,
        "window_start_ns": first[0] if first else None,
        "events_per_s": counts["events"] / window if window > 0 else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    result = asyncio.run(run(args))
    args.out.write_text(json.dumps(result) + "\n")
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
