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

Pub/sub channels: ``P ch:lobby`` (lobby changes), ``P ch:node:{node}``
(node-to-node messages of :mod:`server.cluster`: a room's events reach the members
on other nodes over their nodes' channels, not over a channel of the room).

Appends run one Lua script, a compare-and-append: it checks the lease, reads the
stream's last seq, refuses a first seq that is not the next one and XADDs each event
with the explicit id ``{seq}-1`` (the msgpack bytes the room made, holding their
seqs, stored as they are), all atomically, so seqs have no gaps and two owners of a
room cannot both append the same seq. Redis is reached
through one facade, :class:`~server.presence.redis_link.RedisLink`: single
commands and scripts of rooms and sessions on one lean pipelined connection
(:mod:`server.presence.resp`), transactions and scans through redis-py, with one
error regime: every Redis failure (refused connection, socket timeout) is raised
as :class:`PresenceError`, and both reconnect by themselves once Redis is back. A
subscription whose connection breaks ends (it does not silently resubscribe), so
its owner knows to catch up from the log.

The parts: :mod:`~server.presence.redis_link` (the two clients, one error regime),
the ports :mod:`~server.presence.redis_bus`, :mod:`~server.presence.redis_leases`,
:mod:`~server.presence.redis_lobby`, :mod:`~server.presence.redis_names`,
:mod:`~server.presence.redis_queues`, :mod:`~server.presence.redis_ratings`,
:mod:`~server.presence.redis_records`, :mod:`~server.presence.redis_rooms` (settings
and event logs: its append script checks the lease and sets the lobby entry too) and
:mod:`~server.presence.redis_sessions`,
:mod:`~server.presence.redis_scripts` (the Lua scripts),
:mod:`~server.presence.redis_subscription` (pub/sub) and
:mod:`~server.presence.redis_values` (how values are stored; the one error regime).
"""

from __future__ import annotations

from collections.abc import Callable

from server.presence.base import Presence
from server.presence.redis_bus import RedisBus
from server.presence.redis_leases import RedisLeases
from server.presence.redis_link import RedisLink
from server.presence.redis_lobby import RedisLobby
from server.presence.redis_names import RedisNames
from server.presence.redis_queues import RedisQueues
from server.presence.redis_ratings import RedisRatings
from server.presence.redis_records import RedisRecords
from server.presence.redis_rooms import RedisRooms
from server.presence.redis_sessions import RedisSessions


class RedisPresence(Presence):
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
        self.bus = RedisBus(self.link)
        self.leases = RedisLeases(self.link)
        self.lobby = RedisLobby(self.link)
        self.names = RedisNames(self.link)
        self.queues = RedisQueues(self.link)
        self.ratings = RedisRatings(self.link)
        self.records = RedisRecords(self.link)
        self.rooms = RedisRooms(self.link)
        self.sessions = RedisSessions(self.link)

    @property
    def observe(self) -> Callable[[str, float, str | None], None]:
        """Told of every round trip (operation, its perf_counter start, error or None)."""
        return self.link.observe

    @observe.setter
    def observe(self, fn: Callable[[str, float, str | None], None]) -> None:
        self.link.observe = fn

    async def start(self, wait: float = 10.0) -> None:
        await self.link.start(wait)

    async def close(self) -> None:
        await self.link.close()
