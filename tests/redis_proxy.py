"""A TCP proxy between one node and a real Redis, to stop a node at an exact point.

It forwards bytes both ways until the node sends a command containing the armed
marker (say, the JSON of the move being appended): that command still reaches
Redis, nothing the node sends afterwards does, and :attr:`RedisProxy.tripped` is
set, so a test can kill the node knowing it got exactly that far (a crash right
after a given write; no timing race with the node's next steps).
"""

from __future__ import annotations

import asyncio
import contextlib


class RedisProxy:
    def __init__(self, port: int) -> None:
        self.port = port
        self.marker: bytes | None = None
        self.tripped = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"redis://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/0"

    def arm(self, marker: bytes) -> None:
        """Stop forwarding the node's bytes right after a command containing ``marker``."""
        self.marker = marker

    def hang(self) -> None:
        """From now on nothing the node sends reaches Redis (a Redis that stopped answering)."""
        self.tripped.set()

    async def __aenter__(self) -> RedisProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._writers):
            w.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        for task in (
            asyncio.create_task(self._pump(reader, up_writer, watch=True)),
            asyncio.create_task(self._pump(up_reader, writer, watch=False)),
        ):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, watch: bool
    ) -> None:
        tail = b""
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if watch and self.tripped.is_set():
                    continue  # the node "died" after the marked command: swallowed
                writer.write(data)
                await writer.drain()
                if watch and self.marker is not None:
                    if self.marker in tail + data:
                        self.tripped.set()
                    tail = (tail + data)[-len(self.marker) :]
        writer.close()
