"""A streaming OpenAI-compatible test server whose timing is known exactly: a measuring instrument, not an engine.

Chunk ``k`` (0-based) of a streamed response is written at the absolute deadline ``t0 + ttft + k * itl``, ``t0``
being the moment the request body was read. Each chunk carries ``tokens_per_chunk`` tokens (the last one the
remainder), as a speculative engine's chunks do. So, for ``n`` output tokens in ``C`` chunks:

* TTFT = ``ttft_ms``; E2E = ``ttft_ms + (C - 1) * itl_ms``; TPOT = ``(C - 1) * itl_ms / (n - 1)``;
* per-token ITL of chunk ``k >= 1`` = ``itl_ms / tokens(k)``, once per token of that chunk.

:func:`expected_timing` returns this truth. Timer precision: asyncio's default epoll loop wakes timers on
millisecond boundaries (up to ~1 ms late); :func:`precise_event_loop` (``select()``, microsecond timeouts, at most
~1000 sockets) is what the command line uses by default and what tests should use. On an epoll loop ``spin_us``
makes the server yield-spin that long before each deadline instead (costs CPU). The lateness of every chunk is
recorded and served at ``GET /stats`` (``POST /stats/reset`` clears it), with the peak number of streams in flight.

Fault modes (each named in ``tests/runner/fault_cases.py`` with the harness's expected outcome): per request or
for the whole server, ``fail_status`` (every generation answered with that HTTP status), ``fail_after_chunks`` with
``fail_mode`` (the stream is cut, or ends with an error event), ``hang_after_chunks`` (the stream stops sending
tokens but stays open, with an SSE comment every half second, so only a total per-request timeout ends it),
``bad_body`` (``html``: a 200 answer with an HTML page, as a proxy gives; ``malformed_sse``: events that are not
JSON), ``max_streams`` (503 while that many streams are in flight: a server over capacity) and ``ready=False``
(``/health`` answers 503 forever). The command line adds process faults:
``--exit-at-start STATUS`` (exits before listening), ``--die-after-requests N`` (the process SIGKILLs itself when
the N-th generation request arrives, cutting every stream in flight) and ``--ignore-sigterm`` (SIGTERM and SIGINT
are ignored, so only SIGKILL stops it).

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /generate`` (SGLang 0.5.17's native layout:
``text``, ``output_ids`` and ``meta_info``, cumulative by default, incremental with ``incremental_output``),
``GET /health``, ``GET /v1/models``, ``GET /stats``. Every response carries the header
``x-benchbook-test-server: 1``; ``/v1/models`` says ``owned_by: benchbook-testserver``. A request may override any
:class:`TestServerConfig` field with a ``"benchbook_test": {...}`` object in its JSON body.

Run: ``python -m bench.testing.testserver --port 8000 --ttft-ms 50 --itl-ms 10 --tokens-per-chunk 3``.
Raw asyncio HTTP/1.1 (keep-alive, chunked transfer), standard library only. Binds to 127.0.0.1 by default.
"""

from ._cli import main
from ._config import HEADER, SERVER_NAME, TestServerConfig, Truth, chunk_plan, expected_timing
from ._prefix_cache import PrefixCacheSim
from ._server import TestServer, precise_event_loop, serve
from ._stats import ServerStats, StreamLog

__all__ = [
    "HEADER",
    "SERVER_NAME",
    "PrefixCacheSim",
    "ServerStats",
    "StreamLog",
    "TestServer",
    "TestServerConfig",
    "Truth",
    "chunk_plan",
    "expected_timing",
    "main",
    "precise_event_loop",
    "serve",
]
