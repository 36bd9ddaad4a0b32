"""The ports of the SQLite store (:mod:`server.presence.sqlite`) that differ from
memory's: sessions, name claims and ratings (in memory, written through) and game records (in
the database only: there may be many, and nothing but ``get`` needs them whole);
and :func:`durable`, which refuses a change of the store or of a port once the
store has failed (a change is committed in the background: output commit)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from server.presence.base import JSON, name_key, secret_hash
from server.presence.names import MemoryNames
from server.presence.ratings import MemoryRatings
from server.presence.records import Records
from server.presence.sessions import MemorySessions
from server.presence.sqlite_records import record_statements
from server.presence.sqlite_schema import dumps


class SqlitePresence(Protocol):
    """What the ports use of their store (:class:`server.presence.sqlite.SqlitePresence`;
    not imported: it imports this module)."""

    _writer: Any
    store: Any

    def _writer_or_fail(self) -> Any: ...
    def _write(self, sql: str, *params: Any) -> None: ...
    def _read(self, sql: str, *params: Any) -> list[Any]: ...
    async def settled(self) -> None: ...


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def durable(fn: F) -> F:
    """The decorated change is refused once the store has failed (nothing more can be
    promised to be on disk); otherwise it is made now and committed in the background."""

    @functools.wraps(fn)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        writer = self.store._writer  # (the store's own: its ``store`` is itself)
        if writer is None or writer.failed is not None:
            self.store._writer_or_fail().check()  # (raises)
        return await fn(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class SqliteRatings(MemoryRatings):
    """The ratings in memory, each change written through (loaded at start)."""

    def __init__(self, store: SqlitePresence) -> None:
        super().__init__()
        self.store = store

    @durable
    async def put(self, game: str, ratings: dict[str, JSON]) -> None:
        await super().put(game, ratings)
        for player, rating in ratings.items():
            self.store._write(
                "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?)", game, player, dumps(rating)
            )


class SqliteNames(MemoryNames):
    """The claims in memory, each new one written through (loaded at start)."""

    def __init__(self, store: SqlitePresence) -> None:
        super().__init__()
        self.store = store

    @durable
    async def claim(self, name: str, secret: str) -> bool:
        new = name_key(name) not in self.claims
        ok = await super().claim(name, secret)
        if new:
            self.store._write(
                "INSERT INTO names VALUES (?, ?)", name_key(name), secret_hash(secret)
            )
        return ok


class SqliteSessions(MemorySessions):
    """The sessions in memory, each change written through (the live ones loaded at
    start, their TTLs as wall-clock expiries on disk)."""

    def __init__(self, store: SqlitePresence) -> None:
        super().__init__()
        self.store = store

    @durable
    async def create(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        await super().create(session_id, token, data, ttl)
        self.store._write(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?)",
            session_id,
            secret_hash(token),
            dumps(data),
            time.time() + ttl,
        )

    @durable
    async def update(self, session_id: str, data: JSON) -> bool:
        if not await super().update(session_id, data):
            return False
        self.store._write("UPDATE sessions SET data = ? WHERE id = ?", dumps(data), session_id)
        return True

    @durable
    async def touch(self, session_id: str, ttl: float) -> bool:
        if not await super().touch(session_id, ttl):
            return False
        expires = time.time() + ttl
        self.store._write("UPDATE sessions SET expires = ? WHERE id = ?", expires, session_id)
        return True

    @durable
    async def end(self, session_id: str) -> None:
        await super().end(session_id)
        self.store._write("DELETE FROM sessions WHERE id = ?", session_id)


class SqliteRecords(Records):
    """Finished games' records, in the database only."""

    def __init__(self, store: SqlitePresence) -> None:
        self.store = store
        #: the put number of the newest record (loaded at start)
        self.n = 0

    @durable
    async def put(self, game_id: str, record: JSON) -> None:
        self.n += 1
        for sql, params in record_statements(game_id, record, self.n):
            self.store._write(sql, *params)

    async def get(self, game_id: str) -> JSON | None:
        await self.store.settled()  # (records are read from the database: the writes first)
        row = self.store._read("SELECT data FROM records WHERE game_id = ?", game_id)
        return None if not row else json.loads(row[0][0])

    async def latest(
        self, limit: int = 50, player: str | None = None, game: str | None = None, offset: int = 0
    ) -> list[JSON]:
        await self.store.settled()
        sql = "SELECT r.game_id, r.data FROM records r"
        where, params = [], []
        if player is not None:
            sql += " JOIN record_players p ON p.game_id = r.game_id AND p.player = ?"
            params.append(player)
        if game is not None:
            where.append("r.game = ?")
            params.append(game)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.n DESC LIMIT ? OFFSET ?"
        rows = self.store._read(sql, *params, limit, offset)
        return [{"game_id": g, "record": json.loads(d)} for g, d in rows]
