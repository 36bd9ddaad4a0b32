"""The lobby and rooms ports of the SQLite store (:mod:`server.presence.sqlite`): memory's
(:class:`~server.presence.lobby.MemoryLobby`, :class:`~server.presence.rooms.MemoryRooms`),
each change written through (loaded at start). Leases stay in memory: the data dir's
lock admits no other node, so a restart finds none (every room is taken over)."""

from __future__ import annotations

from server.presence.leases import MemoryLeases
from server.presence.lobby import MemoryLobby
from server.presence.rooms import MemoryRooms
from server.presence.sqlite_ports import SqlitePresence, durable
from server.presence.sqlite_schema import dumps
from server.presence.values import JSON


class SqliteLobby(MemoryLobby):
    def __init__(self, store: SqlitePresence) -> None:
        super().__init__()
        self.store = store

    @durable
    async def upsert(self, room_id: str, summary: JSON) -> None:
        await super().upsert(room_id, summary)
        sql = "INSERT OR REPLACE INTO lobby VALUES (?, ?)"
        self.store._write(sql, room_id, self.packed[room_id])

    @durable
    async def remove(self, room_id: str) -> None:
        if room_id in self.packed:
            self.store._write("DELETE FROM lobby WHERE room_id = ?", room_id)
        await super().remove(room_id)


class SqliteRooms(MemoryRooms):
    def __init__(self, store: SqlitePresence, leases: MemoryLeases, lobby: SqliteLobby) -> None:
        super().__init__(leases, lobby)
        self.store = store

    @durable
    async def put(self, room_id: str, meta: JSON) -> None:
        await super().put(room_id, meta)
        self.store._write("INSERT OR REPLACE INTO rooms VALUES (?, ?)", room_id, dumps(meta))

    @durable
    async def drop_closed(self, room_id: str) -> None:
        await super().drop_closed(room_id)
        self.store._write("DELETE FROM rooms WHERE room_id = ?", room_id)
        self.store._write("DELETE FROM events WHERE room_id = ?", room_id)

    open = durable(MemoryRooms.open)
    append = durable(MemoryRooms.append)

    def _logged(self, room_id: str, seq: int, packed: bytes) -> None:
        self.store._write("INSERT INTO events VALUES (?, ?, ?)", room_id, seq, packed)
