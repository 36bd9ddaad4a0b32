"""Group commit: the writes of one event-loop step go to disk together, off the loop.

Callers on the loop add statements with :meth:`GroupCommit.write` and go on at once
(no await: a suspended room would cost more than the write). The batch is handed to
the writer thread at the next loop step (``call_soon``); the thread runs every batch
waiting for it in one transaction and one commit (one fsync in WAL mode with
``synchronous=FULL``), then resolves their futures on the loop. What tells a client
of a change waits for :meth:`GroupCommit.barrier` (output commit: server.connection
holds the frames), so a move costs its share of an fsync, the loop never waits on
the disk, and nobody hears of a write before it is on disk.

A commit that fails (a full disk, an I/O error) fails its futures and every write
after it (:class:`~server.presence.base.PresenceError`): what is in memory can no
longer be promised to be on disk, so nothing more is acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from server.presence.base import PresenceError

log = structlog.get_logger("arena.store")

Statement = tuple[str, tuple[Any, ...]]
#: batches committed together at most (bounds one transaction under a backlog)
MAX_GROUP = 512


class GroupCommit:
    def __init__(self, conn: sqlite3.Connection, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._loop = loop
        self._batch: list[Statement] = []
        self._future: asyncio.Future[None] | None = None
        #: the newest batch's future (open, being committed, or done)
        self._last: asyncio.Future[None] | None = None
        self._after: list[Callable[[], None]] = []
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.failed: str | None = None
        #: commits done and their durations (seconds), for bench/server.py
        self.commits = 0
        self.commit_seconds = 0.0
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._thread.start()

    def check(self) -> None:
        if self.failed is not None:
            raise PresenceError(f"storage failed: {self.failed}")

    def write(self, sql: str, params: tuple[Any, ...] = ()) -> asyncio.Future[None]:
        """Add a statement to the current batch; the future of its commit."""
        self.check()
        self._batch.append((sql, params))
        return self.pending()  # type: ignore[return-value]

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

    def pending(self) -> asyncio.Future[None] | None:
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
            self._queue.put((batch, future, after))
        elif future is not None and not future.done():
            future.set_result(None)

    async def close(self) -> None:
        """Commit what is queued, then stop the thread."""
        self._hand_over()
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    # -- the writer thread ------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            group = [item]
            stop = False
            while len(group) < MAX_GROUP:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                group.append(nxt)
            error = self._commit(group)
            self._loop.call_soon_threadsafe(self._resolve, group, error)
            if stop:
                return

    def _commit(self, group: list[Any]) -> str | None:
        if self.failed is not None:
            return self.failed
        t0 = time.perf_counter()
        conn = self._conn
        try:
            conn.execute("BEGIN")
            for batch, _, _ in group:
                for sql, params in batch:
                    conn.execute(sql, params)
            conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            if conn.in_transaction:  # (if even that fails, failed says so below)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            return f"{type(exc).__name__}: {exc}"
        self.commits += 1
        self.commit_seconds += time.perf_counter() - t0
        return None

    def _resolve(self, group: list[Any], error: str | None) -> None:
        if error is not None and self.failed is None:
            self.failed = error
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
