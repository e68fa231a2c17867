"""benchbook's test server for the side-by-side benchmark, with a log that names each stream.

The test server already notes, per streamed request, when its body was read (``t0_ns``) and when each content
chunk was written (``emit_ns``), on ``perf_counter_ns`` (CLOCK_MONOTONIC on Linux: one clock for every process
of the machine). This wrapper adds the prompt's first word to that log (the benchmark's own client puts a unique
word there) and lifts the cap on logged streams, so that a client's receipt time of chunk ``k`` of request ``r``
can be set against the server's send time of the same chunk. On SIGTERM it writes the log as JSON to ``--dump``
and exits.

    python benchmarks/peers/server.py --dump streams.json [--ttft-ms 0 --itl-ms 0 --output-tokens 256]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from time import perf_counter_ns
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import bench.testing.testserver._server as server_module  # noqa: E402
from bench.testing.testserver import StreamLog, TestServer, TestServerConfig, Truth, precise_event_loop  # noqa: E402
from bench.testing.testserver._wire import Events, response_head, sse  # noqa: E402

__all__ = ["NamedStreamServer", "StepPacer", "main"]

server_module.MAX_STREAM_LOGS = 10_000_000  # every stream of a benchmark run (a few MB of integers)


def first_word(body: dict[str, Any]) -> str:
    prompt = body.get("prompt", body.get("text"))
    if prompt is None and isinstance(body.get("messages"), list) and body["messages"]:
        message = body["messages"][-1]
        prompt = message.get("content") if isinstance(message, dict) else None
    words = str(prompt or "").split(maxsplit=1)
    return words[0] if words else ""


class StepPacer:
    """Paced streams as a batched engine emits them: one tick every ``itl`` seconds (one timer for the whole
    process, deadlines on the loop's clock so ticks do not drift), and at each tick the next chunk of every active
    stream, written back to back, each stamped just before its write. Per token it costs a write, not a timer and a
    task wake-up per stream, so the server needs a fraction of the cores the per-stream pacing does."""

    def __init__(self, itl_s: float) -> None:
        self.itl_s = itl_s
        self._streams: list[tuple[asyncio.StreamWriter, list[bytes], list[int], asyncio.Future[bool]]] = []
        self._next: float | None = None

    def add(self, writer: asyncio.StreamWriter, parts: list[bytes], emit: list[int]) -> asyncio.Future[bool]:
        """Stream ``parts`` (each one chunk) from the next tick on; the future is True when all are written."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        self._streams.append((writer, list(reversed(parts)), emit, done))
        if self._next is None:
            self._next = loop.time() + self.itl_s
            loop.call_at(self._next, self._tick)
        return done

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        keep = []
        for writer, left, emit, done in self._streams:
            if writer.transport.is_closing():
                done.set_result(False)
                continue
            emit.append(perf_counter_ns())
            writer.write(left.pop())
            if left:
                keep.append((writer, left, emit, done))
            else:
                done.set_result(True)
        self._streams = keep
        if not keep:
            self._next = None
            return
        assert self._next is not None
        self._next = max(self._next + self.itl_s, loop.time())
        loop.call_at(self._next, self._tick)


class NamedStreamServer(TestServer):
    """The test server; ``names[t0_ns]`` is the first word of the prompt of the stream that began at ``t0_ns``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.names: dict[int, str] = {}
        self._bodies: dict[tuple[Any, ...], list[bytes]] = {}  # zero delay: rendered chunks per request shape
        self.writes = "chunk"
        self.pacer: StepPacer | None = None  # --pace step: paced streams through one ticker

    async def _generate(
        self,
        writer: asyncio.StreamWriter,
        path: str,
        body: dict[str, Any],
        origin: tuple[float, int],
        keep_alive: bool,
    ) -> bool:
        self.names[origin[1]] = first_word(body)
        return await super()._generate(writer, path, body, origin, keep_alive)

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        api: str,
        body: dict[str, Any],
        cfg: TestServerConfig,
        truth: Truth,
        prompt: tuple[int, int | None],
        origin: tuple[float, int],
        keep_alive: bool,
    ) -> bool:
        """At zero delay every chunk is due at once: the whole answer goes out in one write (the test server writes
        chunk by chunk, a send() per chunk, and is then the limit), rendered once per request shape (the answer
        depends only on the route, the options, the prompt's length and the output length); each chunk's send time
        is that write's."""
        paced = cfg.ttft_ms or cfg.itl_ms
        if (paced and self.pacer is None) or cfg.role_chunk or api == "generate":
            return await super()._stream(writer, api, body, cfg, truth, prompt, origin, keep_alive)
        options = body.get("stream_options") or {}
        include_usage = cfg.usage and bool(options.get("include_usage"))
        continuous = cfg.usage and bool(options.get("continuous_usage_stats"))
        connection = "keep-alive" if keep_alive else "close"
        key = (api, connection, include_usage, continuous, prompt, len(truth.chunk_tokens), truth.output_tokens)
        parts = self._bodies.get(key)
        if parts is None:
            head = {"content-type": "text/event-stream", "cache-control": "no-cache", "transfer-encoding": "chunked"}
            events = Events(api, cfg, truth, prompt, continuous)
            parts = [response_head(200, {**head, "connection": connection})]
            parts += [sse(events.content(k, size)) for k, size in enumerate(truth.chunk_tokens)]
            tail = sse(events.finish())
            if include_usage:
                tail += sse(events.usage())
            parts[-1] += tail + sse(b"[DONE]") + b"0\r\n\r\n"
            self._bodies[key] = parts
        log = StreamLog(api, origin[1], chunk_tokens=list(truth.chunk_tokens))
        self.stats.streams.append(log)
        if self.pacer is not None and paced:
            writer.write(parts[0])
            ok = await self.pacer.add(writer, parts[1:], log.emit_ns)
            self.stats.chunks += len(log.emit_ns)
            await writer.drain()
            return keep_alive and ok
        if self.writes == "burst":
            log.emit_ns = [perf_counter_ns()] * len(truth.chunk_tokens)
            writer.write(b"".join(parts))
            self.stats.chunks += len(truth.chunk_tokens)
            await writer.drain()
            return keep_alive
        writer.write(parts[0])
        emit = log.emit_ns
        step = self.writes == "step"
        for part in parts[1:]:  # step: a chunk for this stream, then the other streams' turn (a decode step)
            if step:
                await asyncio.sleep(0)
            if writer.transport.is_closing():
                return False
            emit.append(perf_counter_ns())
            writer.write(part)
            self.stats.chunks += 1
            await writer.drain()
        return keep_alive

    async def start(self, reuse_port: bool = False) -> None:
        """As the test server's, with SO_REUSEPORT when several processes share the port."""
        self._server = await asyncio.start_server(
            self._connection, self.host, self.port, backlog=4096, reuse_port=reuse_port or None
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def dump(self) -> dict[str, Any]:
        streams = [
            {"name": self.names.get(s.t0_ns, ""), "t0_ns": s.t0_ns, "emit_ns": s.emit_ns, "tokens": sum(s.chunk_tokens)}
            for s in self.stats.streams
        ]
        return {"stats": self.stats.as_json(), "streams": streams}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ttft-ms", type=float, default=0.0)
    p.add_argument("--itl-ms", type=float, default=0.0)
    p.add_argument("--output-tokens", type=int, default=256)
    p.add_argument("--loop", choices=["select", "epoll"], default="epoll")
    p.add_argument(
        "--writes",
        choices=["chunk", "step", "burst"],
        default="chunk",
        help="zero delay: chunk = one write per chunk, a whole answer at once (as the test server writes); "
        "step = one write per chunk, every stream's chunk k before any stream's k+1, as a batched engine's decode "
        "steps; burst = a whole answer in one write",
    )
    p.add_argument(
        "--pace",
        choices=["stream", "step"],
        default="stream",
        help="with --itl-ms: stream = a timer per stream and token (the test server's pacing); step = one ticker "
        "per process writing every active stream's next chunk each itl ms, as a batched engine's decode steps "
        "(the first chunk comes at the first tick: --ttft-ms is not used)",
    )
    p.add_argument("--dump", type=Path, required=True, help="write the stream log here on SIGTERM")
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        help="server processes behind one port (SO_REUSEPORT: the kernel spreads connections over them); "
        "the first one's dump holds every process's streams",
    )
    p.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)  # a process started by the first
    args = p.parse_args(argv)
    config = TestServerConfig(ttft_ms=args.ttft_ms, itl_ms=args.itl_ms, output_tokens=args.output_tokens)
    reuse = args.reuse_port or args.processes > 1

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        server = NamedStreamServer(config, args.host, args.port)
        server.writes = args.writes
        if args.pace == "step" and args.itl_ms > 0:
            server.pacer = StepPacer(args.itl_ms / 1e3)
        await server.start(reuse_port=reuse)
        others = []
        for i in range(1, args.processes):
            command = [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:])]
            command += ["--port", str(server.port), "--processes", "1", "--reuse-port"]
            command += ["--dump", str(args.dump.with_name(f"{args.dump.name}.{i}"))]
            others.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        for other in others:  # each says it listens before the port is announced
            assert other.stdout is not None
            other.stdout.readline()
        print(f"listening on {server.url}", flush=True)
        await stop.wait()
        await server.close()
        result = server.dump()
        for i, other in enumerate(others, start=1):
            other.send_signal(signal.SIGTERM)
            other.wait(timeout=60)
            part = json.loads(args.dump.with_name(f"{args.dump.name}.{i}").read_text())
            result["streams"] += part["streams"]
        tmp = args.dump.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(args.dump)

    with asyncio.Runner(loop_factory=precise_event_loop if args.loop == "select" else None) as runner:
        runner.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
