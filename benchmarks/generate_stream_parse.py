"""What parsing one SGLang /generate stream costs the client, by output length and streaming mode.

Streams are built in SGLang 0.5.17's layout (``{"text": …, "output_ids": […], "meta_info": {…}}``, compact JSON,
one token per chunk): cumulative (SGLang's default: every chunk repeats all text and ids so far) or incremental
(``--incremental-streaming-output``). For each, the CPU time (best of ``--repeats``) of

* the SSE framing (``SSEDecoder``: bytes to events; moves every byte the server sent),
* folding the events into timestamps and counts (``bench.runner._stream.StreamState``), and
* the same fold with every chunk decoded whole (``json.loads``), as the client did before ``bench.runner._native``.

    .venv/bin/python benchmarks/generate_stream_parse.py     # ~1 minute
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.runner.client as client_module  # noqa: E402
from bench.runner._sse import SSEDecoder, SSEEvent  # noqa: E402
from bench.runner._stream import StreamState  # noqa: E402


def stream(n: int, incremental: bool) -> list[bytes]:
    chunks: list[bytes] = []
    ids: list[int] = []
    text = ""
    for k in range(1, n + 1):
        token = (k * 7919) % 49152
        ids.append(token)
        piece = f" t{token % 1000}"
        text += piece
        meta: dict[str, Any] = {
            "id": "bench",
            "finish_reason": {"type": "length", "length": n} if k == n else None,
            "prompt_tokens": 300,
            "completion_tokens": k,
            "cached_tokens": 2,
        }
        obj = {"text": piece if incremental else text, "output_ids": [token] if incremental else ids, "meta_info": meta}
        chunks.append(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")
    return [*chunks, b"data: [DONE]\n\n"]


def best(fn: Callable[[], None], repeats: int) -> float:
    out = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out = min(out, time.process_time() - t0)
    return out


def frame(chunks: list[bytes]) -> None:
    decoder = SSEDecoder()
    for chunk in chunks:
        decoder.feed(chunk)


def fold(events: list[SSEEvent]) -> None:
    state = StreamState("generate", keep_text=False)
    for event in events:
        state.on_event(event, 0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, nargs="+", default=[1000, 2000, 4000])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    table = Table(title="Parsing one /generate stream (CPU ms, best of runs)")
    for col in ("mode", "tokens", "MB sent", "SSE framing", "fold (meta_info only)", "fold (whole chunks)"):
        table.add_column(col, justify="right")
    split = client_module.split_chunk
    for incremental in (False, True):
        for n in args.tokens:
            chunks = stream(n, incremental)
            decoder = SSEDecoder()
            events = [e for c in chunks for e in decoder.feed(c)]
            sse = best(lambda chunks=chunks: frame(chunks), args.repeats)
            fast = best(lambda events=events: fold(events), args.repeats)
            client_module.split_chunk = lambda data, skip=0: None  # type: ignore[assignment]
            try:
                whole = best(lambda events=events: fold(events), args.repeats)
            finally:
                client_module.split_chunk = split
            table.add_row(
                "incremental" if incremental else "cumulative",
                f"{n:,}",
                f"{sum(map(len, chunks)) / 1e6:.1f}",
                f"{sse * 1e3:.1f}",
                f"{fast * 1e3:.1f}",
                f"{whole * 1e3:.1f}",
            )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
