"""Presence in Redis: several arena nodes share one lobby, sessions and room logs.

Every key starts with the configurable prefix ``P`` (``arena:`` by default), so
several deployments or test runs can share one Redis:

============================  =========================================================
``P sess:{id}``               hash: ``d`` session data (JSON), ``t`` token hash; PX TTL
``P tok:{hash}``              string: the session id a resume token belongs to; same TTL
``P names``                   hash: name key -> secret hash (claims never expire)
``P lobby``                   hash: room id -> lobby summary (msgpack; or JSON, older)
``P room:{id}``               string: the room's settings and members (JSON)
``P lease:{id}``              string: the owning node; PX TTL, renewed by the owner
``P invite:{code}``           string: the private room an invite code opens
``P log:{id}``                stream: the room's events, entry id ``{seq}-1``, field ``e``
                              (msgpack; JSON as older versions wrote it is read too)
``P q:{queue}``               sorted set: player -> arrival number (quick-match order)
``P qd:{queue}``              hash: player -> ``{"rating", "data"}`` (JSON)
``P rating:{game}``           hash: player -> rating (JSON)
``P board:{game}``            sorted set: player -> minus rating (ties: by name)
``P rec:{game_id}``           string: a finished game's record (JSON)
``P recs``                    sorted set: game id -> put number (newest last)
``P n``                       counter behind arrival and put numbers
============================  =========================================================

Pub/sub channels: ``P ch:lobby`` (lobby changes), ``P ch:room:{id}`` (each
appended event), ``P ch:node:{node}`` (node-to-node messages of
:mod:`server.cluster`).

Appends run one Lua script, a compare-and-append: it checks the lease, reads the
stream's last seq, refuses a first seq that is not the next one, XADDs each event
with the explicit id ``{seq}-1`` and PUBLISHes it (the msgpack bytes the room made,
holding their seqs, stored and sent as they are), all atomically, so seqs have no
gaps and two owners of a room cannot both append the same seq. Redis is reached
through one facade, :class:`~server.presence.redis_link.RedisLink`: single
commands and scripts of rooms and sessions on one lean pipelined connection
(:mod:`server.presence.resp`), transactions and scans through redis-py, with one
error regime: every Redis failure (refused connection, socket timeout) is raised
as :class:`PresenceError`, and both reconnect by themselves once Redis is back. A
subscription whose connection breaks ends (it does not silently resubscribe), so
its owner knows to catch up from the log.

The parts: :mod:`~server.presence.redis_link` (the two clients, one error regime),
:mod:`~server.presence.redis_bus`, :mod:`~server.presence.redis_names`,
:mod:`~server.presence.redis_queues`,
:mod:`~server.presence.redis_ratings`, :mod:`~server.presence.redis_records` and
:mod:`~server.presence.redis_sessions` (ports),
:mod:`~server.presence.redis_rooms` (rooms, leases, event logs),
:mod:`~server.presence.redis_scripts` (the Lua scripts),
:mod:`~server.presence.redis_subscription` (pub/sub) and
:mod:`~server.presence.redis_values` (how values are stored; the one error regime).
"""

from __future__ import annotations

from collections.abc import Callable

from server.presence.base import (
    JSON,
    Presence,
    Subscription,
)
from server.presence.redis_bus import RedisBus
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_names import RedisNames
from server.presence.redis_queues import RedisQueues
from server.presence.redis_ratings import RedisRatings
from server.presence.redis_records import RedisRecords
from server.presence.redis_rooms import RedisRooms
from server.presence.redis_scripts import (
    ACQUIRE,
    APPEND,
    DELETE_ROOM,
    DROP_CLOSED_ROOM,
    LOBBY_REMOVE,
    LOBBY_UPSERT,
    OPEN_ROOM,
    RELEASE,
    RENEW,
    RENEW_MANY,
    Lua,
)
from server.presence.redis_sessions import RedisSessions
from server.presence.redis_values import UPSERT_HEAD, dumps, load, pack


class RedisPresence(RedisRooms, Presence):
    """Presence shared through Redis; see the module docstring for the key layout."""

    shared = True

    def __init__(
        self,
        url: str,
        prefix: str = "arena:",
        socket_timeout: float = 2.0,
        connect_timeout: float = 1.0,
    ) -> None:
        self.url = url
        self.prefix = prefix
        #: both clients, one error regime (server.presence.redis_link)
        self.link = RedisLink(url, prefix, socket_timeout, connect_timeout)
        self.redis = self.link.redis  # (the tournaments' store shares it)
        self.k = self.link.k
        self._x = self.link.x
        self.queues = RedisQueues(self.link)
        self.ratings = RedisRatings(self.link)
        self.records = RedisRecords(self.link)
        self.names = RedisNames(self.link)
        self.bus = RedisBus(self.link)
        self.sessions = RedisSessions(self.link)
        self._lua = self.link.lua
        self._renew_many = self.redis.register_script(RENEW_MANY)
        self._append = Lua(APPEND)
        self._log_keys_of = {}
        self._acquire = Lua(ACQUIRE)
        self._renew = Lua(RENEW)
        self._release = Lua(RELEASE)
        self._delete_room = Lua(DELETE_ROOM)
        self._drop_closed_room = Lua(DROP_CLOSED_ROOM)
        self._open_room = Lua(OPEN_ROOM)
        self._lobby_remove = Lua(LOBBY_REMOVE)
        self._lobby_upsert = Lua(LOBBY_UPSERT)

    @property
    def observe(self) -> Callable[[str, float, str | None], None]:
        """Told of every round trip (operation, its perf_counter start, error or None)."""
        return self.link.observe

    @observe.setter
    def observe(self, fn: Callable[[str, float, str | None], None]) -> None:
        self.link.observe = fn

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, wait: float = 10.0) -> None:
        await self.link.start(wait)

    async def close(self) -> None:
        await self.link.close()

    @guard("ping")
    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def _subscribe(self, channel: str) -> Subscription:
        return await self.link.subscribe(channel)

    # -- lobby ------------------------------------------------------------------
    async def lobby_upsert(self, room_id: str, summary: JSON) -> None:
        packed = pack(summary)
        keys = [self.k("lobby"), self.k("ch", "lobby")]
        await self._lua(self._lobby_upsert, keys, room_id, packed, UPSERT_HEAD + packed)

    async def lobby_remove(self, room_id: str) -> None:
        keys = [self.k("lobby"), self.k("ch", "lobby")]
        event = dumps({"op": "remove", "room_id": room_id})
        await self._lua(self._lobby_remove, keys, room_id, event)

    async def lobby_list(self) -> list[JSON]:
        flat = await self._x("HGETALL", self.k("lobby"), raw=True)
        entries = dict(zip(flat[::2], flat[1::2], strict=True))
        return [load(entries[k]) for k in sorted(entries)]

    async def subscribe_lobby(self) -> Subscription:
        return await self._subscribe(self.k("ch", "lobby"))
