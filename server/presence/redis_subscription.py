"""A Redis pub/sub subscription on a lean connection of its own
(:mod:`server.presence.resp`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from server.presence.base import JSON, Subscription
from server.presence.memory import SUBSCRIBER_BACKLOG
from server.presence.redis_values import CLOSED, load
from server.presence.resp import Connection, ReplyError, RespClient, RespConnectionError, encode


class RedisSubscription(Subscription):
    """One channel on a connection of its own; published messages are parsed as they
    arrive (no reader task) into a bounded queue."""

    def __init__(self, resp: RespClient, channel: str, hub: set[Any]) -> None:
        self._resp = resp
        self._hub = hub
        self._channel = channel
        self._queue: asyncio.Queue[Any] = asyncio.Queue(SUBSCRIBER_BACKLOG + 1)
        self._closed = False
        self._conn: Connection | None = None

    async def open(self, timeout: float) -> None:
        """Subscribe and wait for Redis to confirm, so nothing published after is missed."""
        try:
            async with asyncio.timeout(timeout):
                self._conn = conn = await self._resp.connect()
                conn.on_push = self._on_push
                conn.on_lost = self._end
                reply = await conn.send(encode(("SUBSCRIBE", self._channel)))
            if type(reply) is ReplyError:
                raise RespConnectionError(f"redis refused the subscription: {reply}")
        except BaseException:
            self._end()
            raise
        if self._closed:  # lost while confirming
            raise RespConnectionError("the subscription's connection broke")
        self._hub.add(self)

    def _on_push(self, item: Any) -> None:
        if self._closed or type(item) is not list or len(item) != 3 or item[0] != b"message":
            return
        if self._queue.qsize() >= SUBSCRIBER_BACKLOG:
            self._end()  # too far behind: dropped, the reader catches up from the log
            return
        try:
            self._queue.put_nowait(load(item[2]))
        except ValueError:  # not ours: a subscriber cannot trust the channel any more
            self._end()

    def _end(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._hub.discard(self)
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(CLOSED)
        if self._conn is not None:
            self._conn.on_lost = None
            self._conn.close()

    async def __anext__(self) -> JSON:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is CLOSED:
            self._queue.put_nowait(CLOSED)  # later calls end too
            raise StopAsyncIteration
        return item

    async def close(self) -> None:
        self._end()
