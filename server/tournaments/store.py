"""Where tournaments are kept: one JSON document each, changed by compare-and-set, and
a lease per tournament naming the node that directs it.

Three stores, picked by the presence the server runs on (:func:`open_store`): SQLite
(``tournaments.sqlite3`` in the data dir, beside the presence database: a one-node
server keeps its tournaments across restarts), Redis (the presence's own client:
several nodes share them, and a lapsed lease lets another node take over), and
memory (tests, ``memory://``). Why not in the presence interface itself: tournaments
need only these few operations, and kept apart they do not grow the presence modules.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.presence import Presence, PresenceError

Doc = dict[str, Any]


class TournamentStore(ABC):
    """Documents by id (creation order kept) and per-tournament leases."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Open the store."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release it."""

    @abstractmethod
    async def ids(self) -> list[str]:
        """Every tournament, oldest first."""

    @abstractmethod
    async def get(self, tid: str) -> Doc | None:
        """The document (a copy) with its ``version``, or None."""

    @abstractmethod
    async def create(self, tid: str, doc: Doc) -> None:
        """Store a new document (version 1)."""

    @abstractmethod
    async def swap(self, tid: str, version: int, doc: Doc) -> bool:
        """Replace the document if its stored version is still ``version``."""

    @abstractmethod
    async def hold(self, tid: str, node: str, ttl: float) -> bool:
        """Take or renew the lease on ``tid``; False while another node holds it."""

    async def update(self, tid: str, change: Callable[[Doc], Any]) -> Doc | None:
        """Read, ``change`` (mutates the doc; may raise), compare-and-set; again on a
        conflict. None if there is no such tournament. Returns the stored document."""
        for _ in range(50):
            doc = await self.get(tid)
            if doc is None:
                return None
            version = doc["version"]
            before = json.dumps(doc, sort_keys=True)
            change(doc)
            if json.dumps(doc, sort_keys=True) == before:
                return doc  # nothing changed: nothing written
            doc["version"] = version + 1
            if await self.swap(tid, version, doc):
                return doc
            await asyncio.sleep(0.005)
        raise PresenceError(f"tournament {tid}: too many concurrent changes")


class MemoryStore(TournamentStore):
    """In-process (one node, nothing kept)."""

    def __init__(self) -> None:
        self.docs: dict[str, str] = {}
        self.leases: dict[str, tuple[str, float]] = {}

    async def ids(self) -> list[str]:
        return list(self.docs)

    async def get(self, tid: str) -> Doc | None:
        text = self.docs.get(tid)
        return None if text is None else json.loads(text)

    async def create(self, tid: str, doc: Doc) -> None:
        self.docs[tid] = json.dumps({**doc, "version": 1})

    async def swap(self, tid: str, version: int, doc: Doc) -> bool:
        text = self.docs.get(tid)
        if text is None or json.loads(text)["version"] != version:
            return False
        self.docs[tid] = json.dumps(doc)
        return True

    async def hold(self, tid: str, node: str, ttl: float) -> bool:
        now = time.monotonic()
        owner = self.leases.get(tid)
        if owner is not None and owner[0] != node and owner[1] > now:
            return False
        self.leases[tid] = (node, now + ttl)
        return True


#: the one-node tournament database, in the data dir beside the presence's
DB_FILE = "tournaments.sqlite3"
#: its table (``arena admin backup`` copies it into the backup file under this name)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tournaments (n INTEGER PRIMARY KEY,"
    " id TEXT UNIQUE NOT NULL, version INTEGER NOT NULL, doc TEXT NOT NULL)"
)


class SqliteStore(TournamentStore):
    """``tournaments.sqlite3`` in the data dir; one node (its lease is always held)."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / DB_FILE
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _run(self, sql: str, *params: Any) -> list[Any]:
        with self._lock:
            if self._conn is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(SCHEMA)
                self._conn = conn
            with self._conn:  # one transaction: committed (or rolled back) here
                cur = self._conn.execute(sql, params)
                return [*cur.fetchall(), cur.rowcount]

    async def _q(self, sql: str, *params: Any) -> list[Any]:
        try:
            return await asyncio.to_thread(self._run, sql, *params)
        except sqlite3.Error as exc:
            raise PresenceError(f"tournament store: {exc}") from exc

    async def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def ids(self) -> list[str]:
        return [r[0] for r in (await self._q("SELECT id FROM tournaments ORDER BY n"))[:-1]]

    async def get(self, tid: str) -> Doc | None:
        found = (await self._q("SELECT doc FROM tournaments WHERE id = ?", tid))[:-1]
        return json.loads(found[0][0]) if found else None

    async def create(self, tid: str, doc: Doc) -> None:
        text = json.dumps({**doc, "version": 1})
        await self._q("INSERT INTO tournaments (id, version, doc) VALUES (?, 1, ?)", tid, text)

    async def swap(self, tid: str, version: int, doc: Doc) -> bool:
        changed = await self._q(
            "UPDATE tournaments SET version = ?, doc = ? WHERE id = ? AND version = ?",
            doc["version"],
            json.dumps(doc),
            tid,
            version,
        )
        return changed[-1] == 1

    async def hold(self, tid: str, node: str, ttl: float) -> bool:
        return True


_SWAP = """
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
if cjson.decode(cur)['version'] ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""

_HOLD = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class RedisStore(TournamentStore):
    """In the presence's Redis: ``<prefix>tournament:<id>`` (the document),
    ``<prefix>tournaments`` (ids by creation), ``<prefix>tournament-lease:<id>``."""

    def __init__(self, redis: Any, prefix: str) -> None:
        from redis.exceptions import RedisError  # (only a Redis deployment needs redis-py)

        self.redis = redis
        self.prefix = prefix
        self._failures = (RedisError, OSError, TimeoutError)
        self._swap = redis.register_script(_SWAP)
        self._hold = redis.register_script(_HOLD)

    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    async def _do(self, coro: Any) -> Any:
        try:
            return await coro
        except self._failures as exc:
            raise PresenceError(f"tournament store: {exc}") from exc

    async def ids(self) -> list[str]:
        return list(await self._do(self.redis.zrange(self._k("tournaments"), 0, -1)))

    async def get(self, tid: str) -> Doc | None:
        text = await self._do(self.redis.get(self._k("tournament", tid)))
        return None if text is None else json.loads(text)

    async def create(self, tid: str, doc: Doc) -> None:
        text = json.dumps({**doc, "version": 1})
        await self._do(self.redis.set(self._k("tournament", tid), text, nx=True))
        await self._do(self.redis.zadd(self._k("tournaments"), {tid: time.time()}))

    async def swap(self, tid: str, version: int, doc: Doc) -> bool:
        key = self._k("tournament", tid)
        return bool(await self._do(self._swap(keys=[key], args=[version, json.dumps(doc)])))

    async def hold(self, tid: str, node: str, ttl: float) -> bool:
        key = self._k("tournament-lease", tid)
        return bool(await self._do(self._hold(keys=[key], args=[node, int(ttl * 1000)])))


def open_store(presence: Presence) -> TournamentStore:
    """The store that goes with ``presence`` (see the module docstring)."""
    redis = getattr(presence, "redis", None)
    if redis is not None:
        return RedisStore(redis, presence.prefix)
    data_dir = getattr(presence, "data_dir", None)
    if data_dir is not None:
        return SqliteStore(data_dir)
    shared = getattr(presence, "tournament_store", None)  # arenas sharing one memory store
    if shared is None:
        shared = MemoryStore()
        presence.tournament_store = shared  # type: ignore[attr-defined]
    return shared
