"""One task keeps every connection's keepalive: WebSocket pings without a task per connection.

``websockets``' own keepalive runs a task per connection that sleeps, pings and waits
for the pong under a timeout: two timers and two task wake-ups per ping, the larger part
of what an idle connection cost (issue 18, bench/README.md). Here one sweep pings each
connection every ``interval`` seconds (connections are spread over the sweep's ticks by
when they opened, so the pings of a crowd do not come in bursts), except one that sent
a frame within the interval (a player moving every few seconds is not pinged), and
looks ``timeout`` seconds later whether the pong came. A peer that did not answer in
time is closed with 1011 "keepalive ping timeout", as ``websockets`` closes it
(PROTOCOL.md, limits): a dead peer is still found within ``interval + timeout``
seconds (plus one tick) of the last frame it sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import structlog
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol.errors import CloseCode

if TYPE_CHECKING:
    from server.connection import Connection

log = structlog.get_logger("arena.keepalive")

#: ticks per ping interval, at most (about one a second for the default intervals)
MAX_SLOTS = 60


def _retrieve(fut: asyncio.Future[float]) -> None:
    """Mark a pong future's outcome as seen (a closed connection sets an exception on it)."""
    if not fut.cancelled():
        fut.exception()


class Keepalive:
    """Pings every connection added, every ``interval`` s; closes those whose pong is late."""

    def __init__(self, interval: float, timeout: float | None) -> None:
        if interval <= 0:
            raise ValueError("the ping interval must be positive")
        self.interval = interval
        self.timeout = timeout
        self.slots = max(1, min(int(interval), MAX_SLOTS))
        self.tick = interval / self.slots
        #: ticks after a ping when its pong is looked for
        self.lag = None if timeout is None else max(1, math.ceil(timeout / self.tick - 1e-9))
        self._wheel: list[set[Connection]] = [set() for _ in range(self.slots)]
        self._slot: dict[Connection, int] = {}
        #: tick number -> pings whose pongs are due by then
        self._due: dict[int, list[tuple[Connection, asyncio.Future[float]]]] = {}
        self._tick = 0  # the last tick run
        self._start = time.monotonic()  # when tick 0 was (reset when the sweep starts)
        #: pings of connections with output waiting, each in a task of its own
        self._slow: set[asyncio.Task[None]] = set()

    def add(self, conn: Connection) -> None:
        """Ping ``conn`` from about one interval from now on."""
        slot = self._tick % self.slots  # just visited: its next visit is an interval away
        self._wheel[slot].add(conn)
        self._slot[conn] = slot

    def _move(self, conn: Connection, tick: int) -> None:
        """Visit ``conn`` next at ``tick`` (within the coming revolution of the wheel)."""
        slot = tick % self.slots
        old = self._slot.get(conn)
        if old is not None and old != slot:
            self._wheel[old].discard(conn)
            self._wheel[slot].add(conn)
            self._slot[conn] = slot

    def discard(self, conn: Connection) -> None:
        slot = self._slot.pop(conn, None)
        if slot is not None:
            self._wheel[slot].discard(conn)

    async def run(self) -> None:
        self._start = time.monotonic() - self._tick * self.tick
        try:
            while True:
                next_at = self._start + (self._tick + 1) * self.tick
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                self._tick += 1
                await self.sweep(self._tick)
        finally:
            for pings in self._due.values():
                for _, fut in pings:
                    fut.add_done_callback(_retrieve)
            for task in self._slow:
                task.cancel()

    async def sweep(self, tick: int) -> None:
        """Close the connections whose pongs are due and missing, then ping this tick's slice."""
        for conn, fut in self._due.pop(tick, ()):
            if not fut.done():
                if conn.ws.state is State.OPEN:
                    self._fail(conn)
                fut.add_done_callback(_retrieve)
            else:
                _retrieve(fut)
        await self.ping(list(self._wheel[tick % self.slots]), tick)

    async def ping(self, conns: Iterable[Connection], tick: int) -> None:
        now = time.monotonic()
        for conn in conns:
            ws = conn.ws
            if ws.state is not State.OPEN or conn.closing:
                continue
            quiet_from = conn.heard_at + self.interval
            if quiet_from > now:
                # it sent a frame within the interval, so it was there then: no ping now;
                # it is looked at again an interval after that frame, so a dead peer is
                # still found within interval + timeout (plus a tick) of its last frame
                self._move(conn, math.ceil((quiet_from - self._start) / self.tick))
                continue
            if ws.transport.get_write_buffer_size():
                # output waits: the ping may have to wait for the socket too; not here,
                # or one slow reader would hold every other connection's keepalive
                task = asyncio.create_task(self._ping_slow(conn))
                self._slow.add(task)
                task.add_done_callback(self._slow.discard)
                continue
            try:
                fut = await ws.ping()  # written at once: nothing waits in the buffer
            except ConnectionClosed:
                continue
            if self.lag is None:
                fut.add_done_callback(_retrieve)
            else:
                self._due.setdefault(tick + self.lag, []).append((conn, fut))

    async def _ping_slow(self, conn: Connection) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                pong = await conn.ws.ping()
                await pong
        except TimeoutError:
            self._fail(conn)
        except ConnectionClosed:
            pass

    def _fail(self, conn: Connection) -> None:
        log.info("keepalive_timeout", conn=conn.id)
        with contextlib.suppress(ConnectionClosed):
            conn.close(CloseCode.INTERNAL_ERROR, "keepalive ping timeout", abort=True)
