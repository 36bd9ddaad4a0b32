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
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
        self = cls(asyncio.get_running_loop())
        argv = [sys.executable, "-I", str(CHILD), str(db), *PRAGMAS]
        self._child = await _Child.start(self, argv)
        return self

    def poll(self) -> None:
        """Take the writer's answer now if it has come (cheap: one read while a group
        is being committed, nothing otherwise)."""
        if self._committing is not None and self._child is not None:
            self._child.read()

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


class _Child:
    """The writer process and its pipes: groups out (an asyncio pipe transport), answers
    in, read from a non-blocking pipe when the loop sees it readable, and also whenever
    :meth:`GroupCommit.poll` is called (server.write_batches, as frames are made), so an
    answer is taken in the loop step it arrives in, not at the next step's poll (under
    load a step is several milliseconds, and every move waits for its answer)."""

    def __init__(self, commits: GroupCommit, proc: subprocess.Popen[bytes]) -> None:
        self.commits = commits
        self.proc = proc
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.pipe: asyncio.WriteTransport | None = None
        self.exited = commits._loop.create_future()
        self.stopping = False
        self._buf = bytearray()

    @classmethod
    async def start(cls, commits: GroupCommit, argv: list[str]) -> _Child:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self = cls(commits, proc)
        loop = commits._loop
        self.pipe, _ = await loop.connect_write_pipe(asyncio.Protocol, proc.stdin)
        loop.add_reader(self.fd, self.read)
        return self

    def send(self, data: bytes) -> None:
        assert self.pipe is not None
        self.pipe.write(len(data).to_bytes(4, "big") + data)

    def read(self) -> None:
        """Take the answers that have arrived (none: at once)."""
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError as exc:  # (not expected of a pipe: as if it had ended)
            log.warning("store_writer_pipe", error=str(exc))
            data = b""
        if not data:
            self._ended()
            return
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

    def _ended(self) -> None:
        """Its output ended: the process is gone (or going: its pipes are useless)."""
        self.commits._loop.remove_reader(self.fd)
        code = self.proc.poll()
        if code is None:
            self.proc.kill()
            code = self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        if not self.stopping:
            self.commits.resolve(f"the writer process exited (code {code})")
        if not self.exited.done():
            self.exited.set_result(code)

    async def stop(self) -> None:
        """Ask the process to end (it has answered everything) and wait for it."""
        self.stopping = True
        if self.pipe is not None and not self.pipe.is_closing():
            self.pipe.write(b"\x00\x00\x00\x00")
            self.pipe.close()
        await self.exited
