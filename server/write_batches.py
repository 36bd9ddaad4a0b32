"""Frames of one event-loop step, written together at the next, and held until the
store has them on disk (output commit).

One ``call_soon`` per step for all connections, not one per frame or connection:
frames sent in one step go out in one ``write`` each (one ``send`` syscall, the
largest cost of a frame). On SQLite a change returns before it is on disk
(server.presence.sqlite_writer), so what tells a client of it waits here instead.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from protocol.errors import CloseCode


class Connection(Protocol):
    """What the batches need of a connection (server.connection.Connection)."""

    log: Any

    def take_batch(self) -> list[Any] | None: ...
    def write_frames(self, frames: list[Any]) -> None: ...
    def close(self, code: int, reason: str, abort: bool = False) -> None: ...


class WriteBatches:
    """Connections holding frames of this loop step, written together at the next.

    One ``call_soon`` per step for all connections, not one per frame or connection.
    Output commit: while the store has changes not yet on disk (its ``barrier``, SQLite
    only), frames wait, in order, until the changes made before them are on disk; if
    the disk failed, they are dropped and their connections closed (1011).
    """

    def __init__(
        self,
        barrier: Callable[[], asyncio.Future[None] | None] = lambda: None,
        poll: Callable[[], None] = lambda: None,
    ):
        self._pending: list[Connection] = []
        self._barrier = barrier
        #: the store takes the disk's answer if it has come (its listener releases
        #: frames then): asked as frames are made, many times in a busy loop step
        self._poll = poll
        #: frames waiting for the disk, oldest first: (the batch they wait for, frames)
        self._held: deque[tuple[asyncio.Future[None], list[tuple[Connection, list[Any]]]]]
        self._held = deque()

    def add(self, conn: Connection) -> None:
        self._poll()
        if not self._pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self._pending.append(conn)

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        self.write([(conn, frames) for conn in pending if (frames := conn.take_batch())])

    def hold(self) -> asyncio.Future[None] | None:
        """What frames made now wait for (None: nothing, they may go at once)."""
        barrier = self._barrier()
        if barrier is None and self._held:
            return self._held[-1][0]
        return barrier

    def write(self, group: list[tuple[Connection, list[Any]]]) -> None:
        """Write each connection's frames, now or once what they wait for is on disk."""
        if not group:
            return
        wait = self.hold()
        if wait is None:
            _write_group(group, failed=False)
            return
        if not self._held or self._held[-1][0] is not wait:
            wait.add_done_callback(self.release)
        self._held.append((wait, group))

    def release(self, _done: object = None) -> None:
        """Write the held frames whose batches are on disk (in order; idempotent)."""
        held = self._held
        while held and held[0][0].done():
            wait, group = held.popleft()
            _write_group(group, failed=wait.cancelled() or wait.exception() is not None)


def _write_group(group: list[tuple[Connection, list[Any]]], failed: bool) -> None:
    for conn, frames in group:
        if failed:  # these frames tell of changes the disk did not keep
            conn.close(CloseCode.INTERNAL_ERROR, "storage failed", abort=True)
            continue
        try:
            conn.write_frames(frames)
        except Exception:  # one broken socket must not keep the others' frames back
            conn.log.exception("write_failed")
