"""Group commit: the writes of one event-loop step go to disk together, off the loop.

Callers on the loop add statements with :meth:`GroupCommit.write` and go on at once
(no await: a suspended room would cost more than the write). The batch is handed on
at the next loop step (``call_soon``) to the writer process
(:mod:`server.presence.sqlite_child`), which runs it in one transaction and one
commit (one fsync in WAL mode with ``synchronous=FULL``) and answers; one group is
being committed at a time, and the batches handed on meanwhile go together in the
next. What tells a client of a change waits for :meth:`GroupCommit.barrier` (output
commit: server.connection holds the frames), so a move costs its share of an fsync,
the loop never waits on the disk, and nobody hears of a write before it is on disk.

A commit that fails (a full disk, an I/O error, the writer process gone) fails its
futures and every write after it (:class:`~server.presence.base.PresenceError`):
what is in memory can no longer be promised to be on disk, so nothing more is
acknowledged.
"""

from __future__ import annotations

import asyncio
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import structlog

from server.presence.base import PresenceError
from server.presence.sqlite_schema import PRAGMAS

log = structlog.get_logger("arena.store")

Statement = tuple[str, tuple[Any, ...]]
#: a batch handed on: its statements, its future, what runs once it is on disk
Batch = tuple[list[Statement], "asyncio.Future[None] | None", list[Callable[[], None]]]
#: batches committed together at most (bounds one transaction under a backlog)
MAX_GROUP = 512
CHILD = Path(__file__).with_name("sqlite_child.py")


class GroupCommit:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._batch: list[Statement] = []
        self._future: asyncio.Future[None] | None = None
        #: the newest batch's future (open, being committed, or done)
        self._last: asyncio.Future[None] | None = None
        self._after: list[Callable[[], None]] = []
        #: batches handed on, not yet sent; the group being committed
        self._waiting: list[Batch] = []
        self._committing: list[Batch] | None = None
        self.failed: str | None = None
        #: called as soon as a group is answered (before its futures' callbacks run,
        #: which is a loop step later): server.write_batches releases frames then
        self.listeners: list[Callable[[], None]] = []
        self._child: _Child | None = None

    @classmethod
    async def open(cls, db: Path) -> GroupCommit:
        """Start the writer process on the database ``db`` (already created)."""
        loop = asyncio.get_running_loop()
        self = cls(loop)
        _, child = await loop.subprocess_exec(
            lambda: _Child(self),
            sys.executable,
            "-I",
            str(CHILD),
            str(db),
            *PRAGMAS,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
        )
        self._child = child
        return self

    def check(self) -> None:
        if self.failed is not None:
            raise PresenceError(f"storage failed: {self.failed}")

    def write(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """Add a statement to the current batch (committed at the next loop step)."""
        if self.failed is not None:
            raise PresenceError(f"storage failed: {self.failed}")
        self._batch.append((sql, params))
        if self._future is None:
            self.pending()

    def on_commit(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` on the loop once the current batch is on disk."""
        self.pending()
        self._after.append(fn)

    def current(self) -> asyncio.Future[None] | None:
        """The open batch's future, None if nothing was written in this loop step."""
        return self._future

    def barrier(self) -> asyncio.Future[None] | None:
        """The newest batch's future while it is not on disk (failed: that failure)."""
        last = self._last
        if last is None or (last.done() and self.failed is None):
            return None
        return last

    def pending(self) -> asyncio.Future[None]:
        """The current batch's future (a new batch if none is open)."""
        if self._future is None:
            self._future = self._last = self._loop.create_future()
            # a failure is raised to whoever awaits it; nobody awaiting it is no error
            self._future.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._loop.call_soon(self._hand_over)
        return self._future

    def _hand_over(self) -> None:
        batch, future, after = self._batch, self._future, self._after
        self._batch, self._future, self._after = [], None, []
        if batch or after:
            self._waiting.append((batch, future, after))
            if self._committing is None:
                self._send()
        elif future is not None and not future.done():
            future.set_result(None)

    def _send(self) -> None:
        group, self._waiting = self._waiting[:MAX_GROUP], self._waiting[MAX_GROUP:]
        self._committing = group
        child = self._child
        if self.failed is not None or child is None:
            self.resolve(self.failed or "the store is closed")
            return
        child.send(pickle.dumps([st for batch, _, _ in group for st in batch], protocol=5))

    def resolve(self, error: str | None) -> None:
        """The group being committed is on disk (``error`` None) or failed."""
        group, self._committing = self._committing or [], None
        if error is not None and self.failed is None:
            self.failed = error
            if self._child is None:  # closed: the server is stopping (no failure)
                log.warning("store_write_after_close", statements=sum(len(b) for b, _, _ in group))
            else:
                log.error("store_write_failed", error=error)
        for _, future, after in group:
            if error is None:
                for fn in after:
                    fn()
            if future is not None and not future.done():
                if error is None:
                    future.set_result(None)
                else:
                    future.set_exception(PresenceError(f"storage failed: {error}"))
        for fn in self.listeners:
            fn()
        if self._waiting:
            self._send()

    async def close(self) -> None:
        """Commit what is queued, then stop the writer process."""
        while True:  # (what is written meanwhile is committed too)
            self._hand_over()
            last = self._last
            if last is None or last.done():
                break
            await asyncio.wait([last])  # (groups are answered in order)
        child, self._child = self._child, None
        if child is not None:
            await child.stop()


class _Child(asyncio.SubprocessProtocol):
    """The writer process's pipes: groups out, answers in (each answered at once, in
    the loop step its bytes arrive)."""

    def __init__(self, commits: GroupCommit) -> None:
        self.commits = commits
        self.transport: asyncio.SubprocessTransport | None = None
        self.exited = commits._loop.create_future()
        self.stopping = False
        self._buf = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, data: bytes) -> None:
        assert self.transport is not None
        pipe = cast(asyncio.WriteTransport, self.transport.get_pipe_transport(0))
        pipe.write(len(data).to_bytes(4, "big") + data)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buf = self._buf
        buf += data
        while buf:
            if buf[0] == 0:
                del buf[0]
                self.commits.resolve(None)
            elif len(buf) >= 5 and len(buf) >= 5 + (size := int.from_bytes(buf[1:5], "big")):
                error = buf[5 : 5 + size].decode(errors="replace")
                del buf[: 5 + size]
                self.commits.resolve(error)
            else:
                return

    def process_exited(self) -> None:
        assert self.transport is not None
        code = self.transport.get_returncode()
        if not self.stopping:
            self.commits.resolve(f"the writer process exited (code {code})")
        if not self.exited.done():
            self.exited.set_result(code)

    async def stop(self) -> None:
        """Ask the process to end (it has answered everything) and wait for it."""
        self.stopping = True
        assert self.transport is not None
        pipe = cast(asyncio.WriteTransport, self.transport.get_pipe_transport(0))
        if pipe is not None and not pipe.is_closing():
            pipe.write(b"\x00\x00\x00\x00")
            pipe.close()
        await self.exited
        self.transport.close()
