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
gaps and two owners of a room cannot both append the same seq. The single commands
of rooms and sessions go through one lean pipelined connection
(:mod:`server.presence.resp`); transactions, scans and subscriptions through
redis-py. Every Redis failure (refused connection, socket timeout) is raised
as :class:`PresenceError`; the client library reconnects by itself once Redis is
back. A subscription whose connection breaks ends (it does not silently
resubscribe), so its owner knows to catch up from the log.

The parts: :mod:`~server.presence.redis_rooms` (rooms, leases, event logs),
:mod:`~server.presence.redis_scripts` (the Lua scripts),
:mod:`~server.presence.redis_subscription` (pub/sub) and
:mod:`~server.presence.redis_values` (how values are stored; the one error regime).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, WatchError

from server.presence import sentinel
from server.presence.base import (
    JSON,
    Presence,
    PresenceError,
    Subscription,
    name_key,
    secret_hash,
)
from server.presence.memory import closest_pair
from server.presence.redis_rooms import RedisRooms
from server.presence.redis_scripts import (
    ACQUIRE,
    APPEND,
    DELETE_ROOM,
    DROP_CLOSED_ROOM,
    LOBBY_REMOVE,
    LOBBY_UPSERT,
    OPEN_ROOM,
    PUT_RECORD,
    RELEASE,
    RENEW,
    RENEW_MANY,
    TOUCH_SESSION,
    UPDATE_SESSION,
    UPDATE_SESSIONS,
    Lua,
)
from server.presence.redis_subscription import RedisSubscription
from server.presence.redis_values import UPSERT_HEAD, dumps, guard, ignore, load, ms, pack
from server.presence.resp import (
    ReplyError,
    RespClient,
    RespConnectionError,
)
from server.presence.sentinel import Locator
from server.settings import redacted


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
        self.timeout = socket_timeout
        common: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            "decode_responses": True,
            "health_check_interval": 0,
        }
        # one retry on a broken connection (after a Redis restart a pooled connection fails
        # once, then reconnects); none on a timeout, which may have run the command already
        retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
        self._locator: Locator | None = None
        locate = None
        if url.startswith(sentinel.SCHEME):  # both clients follow Sentinel's primary
            self._locator = Locator(sentinel.parse(url), socket_timeout, connect_timeout)
            pool: Any = self._locator.pool(retry=retry, max_connections=64, **common)
            locate, url = self._locator.primary, self._locator.config.redis_url()
        else:
            # a blocking pool: a burst of requests waits for a free connection (up to the
            # timeout)
            pool = aioredis.BlockingConnectionPool.from_url(
                url, retry=retry, max_connections=64, timeout=socket_timeout, **common
            )
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self._subs: set[RedisSubscription] = set()
        #: told of every round trip (operation, its perf_counter start, error or None)
        self.observe: Callable[[str, float, str | None], None] = ignore
        # single commands (most of a room's traffic) go through one lean pipelined
        # connection: see server.presence.resp for why
        self._resp = RespClient(
            url, timeout=socket_timeout, connect_timeout=connect_timeout, locate=locate
        )
        self._renew_many = self.redis.register_script(RENEW_MANY)
        self._append = Lua(APPEND)
        self._acquire = Lua(ACQUIRE)
        self._renew = Lua(RENEW)
        self._release = Lua(RELEASE)
        self._delete_room = Lua(DELETE_ROOM)
        self._drop_closed_room = Lua(DROP_CLOSED_ROOM)
        self._open_room = Lua(OPEN_ROOM)
        self._put_record = Lua(PUT_RECORD)
        self._update_session = Lua(UPDATE_SESSION)
        self._update_sessions = Lua(UPDATE_SESSIONS)
        self._touch_session = Lua(TOUCH_SESSION)
        self._lobby_remove = Lua(LOBBY_REMOVE)
        self._lobby_upsert = Lua(LOBBY_UPSERT)

    def k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    async def _x(self, *args: Any, raw: bool = False) -> Any:
        """One command on the lean connection (pipelined with every other task's)."""
        started = time.perf_counter()
        try:
            reply = await self._resp.execute(*args, raw=raw)
        except (RespConnectionError, ReplyError) as exc:
            if not str(exc).startswith("NOSCRIPT"):  # (answered by EVAL at once)
                self.observe(args[0], started, type(exc).__name__)
            raise PresenceError(f"redis: {type(exc).__name__}: {exc}") from exc
        self.observe(args[0], started, None)
        return reply

    async def _lua(self, script: Lua, keys: list[str], *args: Any) -> Any:
        try:
            return await self._x("EVALSHA", script.sha, len(keys), *keys, *args)
        except PresenceError as exc:
            if not str(exc).startswith("redis: ReplyError: NOSCRIPT"):
                raise
        return await self._x("EVAL", script.text, len(keys), *keys, *args)  # (caches it)

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, wait: float = 10.0) -> None:
        """Connect; Redis may still be starting (a compose file's ``depends_on`` does not
        wait for it), so keep trying for ``wait`` seconds before giving up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            try:
                await self.redis.ping()
                await self._resp.execute("PING")
                return
            except (RedisError, ReplyError, OSError, TimeoutError) as exc:
                if loop.time() >= deadline:
                    where = redacted(self.url)  # the error is logged: no password in it
                    raise PresenceError(f"redis: cannot connect to {where}: {exc}") from exc
                await asyncio.sleep(0.2)

    async def close(self) -> None:
        for sub in list(self._subs):
            await sub.close()
        self._subs.clear()
        await self._resp.close()
        with contextlib.suppress(Exception):
            await self.redis.aclose()
        if self._locator is not None:
            with contextlib.suppress(Exception):
                await self._locator.close()

    @guard
    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def _subscribe(self, channel: str) -> Subscription:
        sub = RedisSubscription(self._resp, channel, self._subs)
        try:
            await sub.open(self.timeout)
        except (OSError, TimeoutError) as exc:
            raise PresenceError(f"redis: cannot subscribe: {exc}") from exc
        return sub

    # -- sessions -------------------------------------------------------------
    @guard
    async def create_session(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        h = secret_hash(token)
        skey, tkey = self.k("sess", session_id), self.k("tok", h)
        async with self.redis.pipeline(transaction=True) as p:
            p.delete(skey)
            p.hset(skey, mapping={"d": dumps(data), "t": h})
            p.pexpire(skey, ms(ttl))
            p.set(tkey, session_id, px=ms(ttl))
            await p.execute()

    async def get_session(self, session_id: str) -> JSON | None:
        raw = await self._x("HGET", self.k("sess", session_id), "d")
        return None if raw is None else json.loads(raw)

    async def update_session(self, session_id: str, data: JSON) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self._lua(self._update_session, keys, dumps(data)))

    async def update_sessions(self, data: dict[str, JSON]) -> None:
        """One script (for a loop step's saves)."""
        if data:
            keys = [self.k("sess", i) for i in data]
            await self._lua(self._update_sessions, keys, *map(dumps, data.values()))

    async def touch_session(self, session_id: str, ttl: float) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self._lua(self._touch_session, keys, ms(ttl), self.k("tok", "")))

    @guard
    async def resume_session(self, token: str) -> tuple[str, JSON] | None:
        h = secret_hash(token)
        session_id = await self.redis.get(self.k("tok", h))
        if session_id is None:
            return None
        skey = self.k("sess", session_id)
        raw, held = await self.redis.hmget(skey, ["d", "t"])
        if raw is None or held != h:
            return None
        return session_id, json.loads(raw)

    @guard
    async def end_session(self, session_id: str) -> None:
        skey = self.k("sess", session_id)
        h = await self.redis.hget(skey, "t")
        keys = [skey] + ([self.k("tok", h)] if h else [])
        await self.redis.delete(*keys)

    # -- name claims ------------------------------------------------------------
    @guard
    async def claim_name(self, name: str, secret: str) -> bool:
        key, h = self.k("names"), secret_hash(secret)
        async with self.redis.pipeline(transaction=True) as p:
            p.hsetnx(key, name_key(name), h)
            p.hget(key, name_key(name))
            _, held = await p.execute()
        return held == h

    async def name_claimed(self, name: str) -> bool:
        return bool(await self._x("HEXISTS", self.k("names"), name_key(name)))

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

    # -- node-to-node messages (server.cluster) ------------------------------------------
    @guard
    async def publish_node(self, node_id: str, messages: list[str]) -> list[int]:
        """Publish JSON texts to a node's channel, in order, in one round trip; how many
        subscribers got each (0: the node is not listening, the message is lost)."""
        channel = self.k("ch", "node", node_id)
        async with self.redis.pipeline(transaction=False) as p:
            for text in messages:
                p.publish(channel, text)
            return [int(n) for n in await p.execute()]

    async def subscribe_node(self, node_id: str) -> Subscription:
        return await self._subscribe(self.k("ch", "node", node_id))

    async def node_heartbeat(self, node_id: str, ttl: float) -> None:
        await self._x("SET", self.k("node", node_id), "1", "PX", ms(ttl))

    @guard
    async def nodes_alive(self, node_ids: list[str]) -> dict[str, bool]:
        if not node_ids:
            return {}
        found = await self.redis.mget([self.k("node", n) for n in node_ids])
        return {n: v is not None for n, v in zip(node_ids, found, strict=True)}

    @guard
    async def node_gone(self, node_id: str) -> None:
        await self.redis.delete(self.k("node", node_id))

    # -- quick match --------------------------------------------------------------
    @guard
    async def queue_add(self, queue: str, player: str, rating: float, data: JSON) -> None:
        n = await self.redis.incr(self.k("n"))
        async with self.redis.pipeline(transaction=True) as p:
            p.zadd(self.k("q", queue), {player: n})
            p.hset(self.k("qd", queue), player, dumps({"rating": rating, "data": data}))
            await p.execute()

    @guard
    async def queue_cancel(self, queue: str, player: str) -> bool:
        async with self.redis.pipeline(transaction=True) as p:
            p.zrem(self.k("q", queue), player)
            p.hdel(self.k("qd", queue), player)
            removed, _ = await p.execute()
        return bool(removed)

    async def _queue_entries(self, client: Any, queue: str) -> list[JSON]:
        players = await client.zrange(self.k("q", queue), 0, -1)
        if not players:
            return []
        raws = await client.hmget(self.k("qd", queue), players)
        out = []
        for player, raw in zip(players, raws, strict=True):
            if raw is not None:
                entry = json.loads(raw)
                out.append({"player": player, "rating": entry["rating"], "data": entry["data"]})
        return out

    @guard
    async def queue_list(self, queue: str) -> list[JSON]:
        return await self._queue_entries(self.redis, queue)

    @guard
    async def queue_pop_pair(
        self, queue: str, max_gap: float | None = None
    ) -> tuple[JSON, JSON] | None:
        q, qd = self.k("q", queue), self.k("qd", queue)
        async with self.redis.pipeline(transaction=True) as p:
            while True:
                try:
                    await p.watch(q, qd)
                    entries = await self._queue_entries(p, queue)
                    pair = closest_pair(entries, max_gap)
                    if pair is None:
                        await p.unwatch()
                        return None
                    a, b = entries[pair[0]], entries[pair[1]]
                    p.multi()
                    p.zrem(q, a["player"], b["player"])
                    p.hdel(qd, a["player"], b["player"])
                    await p.execute()
                    return a, b
                except WatchError:
                    continue  # another node changed the queue: look again

    # -- ratings --------------------------------------------------------------------
    async def get_rating(self, game: str, player: str) -> JSON | None:
        raw = await self._x("HGET", self.k("rating", game), player)
        return None if raw is None else json.loads(raw)

    @guard
    async def put_ratings(self, game: str, ratings: dict[str, JSON]) -> None:
        if not ratings:
            return
        async with self.redis.pipeline(transaction=True) as p:
            p.hset(self.k("rating", game), mapping={n: dumps(r) for n, r in ratings.items()})
            p.zadd(self.k("board", game), {n: -float(r["rating"]) for n, r in ratings.items()})
            await p.execute()

    @guard
    async def leaderboard(self, game: str, limit: int = 50) -> list[JSON]:
        if limit <= 0:
            return []
        players = await self.redis.zrange(self.k("board", game), 0, limit - 1)
        if not players:
            return []
        raws = await self.redis.hmget(self.k("rating", game), players)
        return [
            {"player": p, **json.loads(raw)}
            for p, raw in zip(players, raws, strict=True)
            if raw is not None
        ]

    # -- records ----------------------------------------------------------------------
    async def put_record(self, game_id: str, record: JSON) -> None:
        keys = [self.k("n"), self.k("rec", game_id), self.k("recs")]
        await self._lua(self._put_record, keys, game_id, dumps(record))

    async def get_record(self, game_id: str) -> JSON | None:
        raw = await self._x("GET", self.k("rec", game_id))
        return None if raw is None else json.loads(raw)

    @guard
    async def list_records(
        self, limit: int = 50, player: str | None = None, game: str | None = None
    ) -> list[JSON]:
        out: list[JSON] = []
        start, chunk = 0, max(limit, 100)
        while len(out) < limit:
            ids = await self.redis.zrevrange(self.k("recs"), start, start + chunk - 1)
            if not ids:
                break
            start += len(ids)
            raws = await self.redis.mget([self.k("rec", i) for i in ids])
            for game_id, raw in zip(ids, raws, strict=True):
                if raw is None:
                    continue
                rec = json.loads(raw)
                if game is not None and rec.get("game") != game:
                    continue
                if player is not None and player not in rec.get("players", []):
                    continue
                out.append({"game_id": game_id, "record": rec})
                if len(out) >= limit:
                    break
        return out
