"""Durable presence for a single node: SQLite (WAL) in a data dir, nothing else to run.

What a restart must find again is kept in SQLite: sessions, name claims, the lobby,
rooms' settings and members, rooms' event logs, ratings and records. It is also kept
in memory (this class *is* a :class:`MemoryPresence`, which it writes through), so
reads cost what they cost in memory; records alone are read from the database (there
may be many, and nothing but ``get_record`` needs them).

**Durability.** A change is made in memory and its statements join the current loop
step's batch; the writer process commits each batch (several, under load) with one
fsync (:mod:`.sqlite_writer`). The change returns at once: what tells a client of it
waits for :meth:`barrier` (output commit, held in server.connection), so a room's
move, and a record announced in ``game_over.record``, reach nobody before they are
on disk, and the room never waits for the disk itself. Reads of the database (the
records) wait for :meth:`settled` first, so they see every change made before them.

**A cluster of one.** The store also carries the node bus of :mod:`server.cluster`
(in process: there is only this node) and room leases (in memory: the data dir's
lock guarantees no other node, so at start the previous run's leases are simply
gone, i.e. taken over). A restarted node restores every room from its log through
the cluster's takeover, the same code as a takeover in Redis mode.

Quick-match queues are not kept: a restart drops every connection, and a dropped
connection leaves its queue (as it always has).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from server.presence.base import JSON
from server.presence.bus import InProcessBus
from server.presence.memory import MemoryPresence
from server.presence.sqlite_ports import (
    SqliteNames,
    SqliteRatings,
    SqliteRecords,
    SqliteSessions,
)
from server.presence.sqlite_records import import_record_files
from server.presence.sqlite_rooms import SqliteLobby, SqliteRooms
from server.presence.sqlite_schema import (
    DB_NAME,
    DataDirError,
    lock_data_dir,
    open_database,
    unlock_data_dir,
)
from server.presence.sqlite_writer import GroupCommit

log = structlog.get_logger("arena.store")


class SqlitePresence(MemoryPresence):
    #: records live in the store, on disk: server.records writes no files of its own
    durable_records = True
    #: it carries a node bus, so the server runs server.cluster on it: a cluster of one
    shared = True

    def __init__(self, data_dir: str | os.PathLike[str], prefix: str = "") -> None:
        super().__init__(prefix=prefix)
        self.ratings = SqliteRatings(self)
        self.records = SqliteRecords(self)
        self.names = SqliteNames(self)
        self.sessions = SqliteSessions(self)
        self.lobby = SqliteLobby(self)
        self.rooms = SqliteRooms(self, self.leases, self.lobby)
        self.data_dir = Path(data_dir)
        self._lock_fd: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._writer: GroupCommit | None = None
        self._commit_listeners: list[Callable[[], None]] = []
        #: what the ports' ``durable`` changes check (a port's ``store`` is this one)
        self.store = self
        self.bus = InProcessBus()
        #: how long opening took, and what it found (logged by the server)
        self.opened: dict[str, Any] = {}

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        if self._writer is not None:
            return
        await asyncio.to_thread(self._open)
        try:
            self._writer = await GroupCommit.open(self.data_dir / DB_NAME)
            self._writer.listeners = self._commit_listeners
        except OSError as exc:
            self._release()
            raise DataDirError(
                f"data dir {self.data_dir}: cannot start its writer process: {exc}"
            ) from None

    def _open(self) -> None:
        t0 = time.perf_counter()
        self._lock_fd = lock_data_dir(self.data_dir)
        try:
            self._conn = open_database(self.data_dir)
            imported = import_record_files(self._conn, self.data_dir)
            self._load()
        except DataDirError:
            self._release()
            raise
        except (sqlite3.DatabaseError, ValueError) as exc:  # a damaged row, say
            self._release()
            raise DataDirError(
                f"data dir {self.data_dir}: its database cannot be read ({exc}); "
                "restore it from a backup (arena admin restore) or move it away"
            ) from None
        except OSError as exc:  # the old records folder could not be taken in
            self._release()
            raise DataDirError(f"data dir {self.data_dir}: {exc}") from None
        self.opened = {
            "sessions": len(self.sessions.live),
            "rooms": len(self.rooms.settings),
            "events": sum(len(log_) for log_ in self.rooms.events.values()),
            "records_imported": imported,
            "open_ms": round((time.perf_counter() - t0) * 1000, 1),
        }

    def _release(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._lock_fd is not None:
            unlock_data_dir(self._lock_fd)
            self._lock_fd = None

    async def close(self) -> None:
        await super().close()
        await self.bus.close()
        if self._writer is not None:
            await self._writer.close()
            self._writer = None
        self._release()

    def _writer_or_fail(self) -> GroupCommit:
        if self._writer is None:
            raise DataDirError("the store is not open")
        return self._writer

    def _write(self, sql: str, *params: Any) -> None:
        writer = self._writer
        if writer is None:
            raise DataDirError("the store is not open")
        writer.write(sql, params)

    def barrier(self) -> asyncio.Future[None] | None:
        return None if self._writer is None else self._writer.barrier()

    def add_commit_listener(self, fn: Callable[[], None]) -> None:
        self._commit_listeners.append(fn)

    def poll_commits(self) -> None:
        if self._writer is not None:
            self._writer.poll()

    # -- loading --------------------------------------------------------------------------
    def _load(self) -> None:
        """Everything but records into memory, as the previous run left it."""
        conn = self._conn
        assert conn is not None
        now, mono = time.time(), time.monotonic()
        conn.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
        for sid, token_hash, data, expires in conn.execute("SELECT * FROM sessions"):
            self.sessions.live[sid] = (json.loads(data), mono + (expires - now))
            self.sessions.tokens[token_hash] = sid
            self.sessions.token_of[sid] = token_hash
        self.names.claims.update(conn.execute("SELECT key, secret_hash FROM names"))
        self.lobby.packed.update(conn.execute("SELECT room_id, packed FROM lobby"))
        for room_id, meta in conn.execute("SELECT room_id, meta FROM rooms"):
            self.rooms.settings[room_id] = json.loads(meta)
        for room_id, seq, packed in conn.execute("SELECT * FROM events ORDER BY room_id, seq"):
            log_ = self.rooms.events[room_id]
            if seq != len(log_) + 1:
                raise DataDirError(f"data dir {self.data_dir}: room {room_id}'s log has a gap")
            log_.append(packed)
        for game, player, data in conn.execute("SELECT * FROM ratings"):
            self.ratings.by_game[game][player] = json.loads(data)
        self.records.n = conn.execute("SELECT coalesce(max(n), 0) FROM records").fetchone()[0]

    # -- what a restarted node restores (server.restore) ------------------------------------
    async def live_sessions(self) -> list[tuple[str, JSON]]:
        """Every live session's ``(id, data)``."""
        live = self.sessions.live
        return [(sid, d) for sid in list(live) if (d := await self.sessions.get(sid))]

    async def room_ids(self) -> list[str]:
        """Every room with settings in the store (open when the last run ended)."""
        return sorted(self.rooms.settings)

    def _read(self, sql: str, *params: Any) -> list[Any]:
        """A short read on the loop (an indexed lookup: no disk wait worth a thread)."""
        if self._conn is None:
            raise DataDirError("the store is not open")
        if self._reader is None:
            self._reader = sqlite3.connect(self.data_dir / DB_NAME, check_same_thread=False)
            self._reader.execute("PRAGMA query_only = 1")
        with contextlib.closing(self._reader.execute(sql, params)) as cur:
            return cur.fetchall()
