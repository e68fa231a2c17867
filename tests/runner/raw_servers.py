"""A bare asyncio server for the client's transport tests, whose handlers answer as each test wants."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(handle: Handler) -> AsyncIterator[int]:
    """``handle`` for each connection to a local port (yielded); the connection is closed when it returns. On
    leaving, the server stops listening and every handler still running is cancelled (one may wait for a request
    that never comes: the client under test keeps its connection open), so that its connection is closed; then the
    server is closed. From Python 3.12 on, ``Server.wait_closed`` waits for every connection to end, and a handler
    left waiting kept it waiting for ever."""
    tasks: set[asyncio.Task[None]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await handle(reader, writer)
        finally:
            writer.close()
            tasks.discard(task)

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()
