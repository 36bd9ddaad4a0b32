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

Appends run one Lua script: it reads the stream's last seq, refuses a wrong
``expected_seq``, XADDs with the explicit id ``{seq}-1`` and PUBLISHes (the
same msgpack bytes on ``ch:room:{id}``), all atomically, so seqs have no gaps
and two owners of a room cannot both append the same seq. The single commands
of rooms and sessions go through one lean pipelined connection
(:mod:`server.presence.resp`); transactions, scans and subscriptions through
redis-py. Every Redis failure (refused connection, socket timeout) is raised
as :class:`PresenceError`; the client library reconnects by itself once Redis is
back. A subscription whose connection breaks ends (it does not silently
resubscribe), so its owner knows to catch up from the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgpack
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, WatchError

from server.presence import sentinel
from server.presence.base import (
    JSON,
    LeaseLost,
    Presence,
    PresenceError,
    SeqConflict,
    Subscription,
    name_key,
    secret_hash,
)
from server.presence.memory import SUBSCRIBER_BACKLOG, closest_pair
from server.presence.resp import (
    Connection,
    ReplyError,
    RespClient,
    RespConnectionError,
    encode,
)
from server.presence.sentinel import Locator
from server.settings import redacted

T = TypeVar("T")

_CLOSED: Any = object()


def _ms(ttl: float) -> int:
    return max(1, round(ttl * 1000))


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: one packer, reused (``msgpack.packb`` builds one per call); events are stored as
#: msgpack, ~4x cheaper to make than JSON
_pack = msgpack.Packer(use_bin_type=True).pack


#: a published lobby upsert, ``{"op": "upsert", "room": summary}``, is this + the packed
#: summary (0x82: a msgpack map of two entries)
_UPSERT_HEAD = b"\x82" + _pack("op") + _pack("upsert") + _pack("room")


def _load(data: bytes | str) -> Any:
    """A stored or published value: a msgpack map (events), or JSON text (the rest, and
    events that an older version logged)."""
    if data[:1] in (b"{", "{"):
        return json.loads(data)
    return msgpack.unpackb(data, raw=False)


def _ignore(op: str, started: float, error: str | None) -> None:
    """The default ``observe``: nobody is timing this store."""


def _guard(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turn every Redis failure into :class:`PresenceError` (typed ``unavailable``);
    report each call's time and failure to its store's ``observe``."""
    op = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: RedisPresence, *args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        try:
            result = await fn(self, *args, **kwargs)
        except PresenceError as exc:
            self.observe(op, started, type(exc).__name__)
            raise
        except (RedisError, OSError, TimeoutError) as exc:
            self.observe(op, started, type(exc).__name__)
            raise PresenceError(f"redis: {type(exc).__name__}: {exc}") from exc
        self.observe(op, started, None)
        return result

    return wrapper


class _Lua:
    """A script run by ``EVALSHA`` on the lean connection (``EVAL`` when Redis lacks it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()


def _fenced_next_seq(owner: str) -> str:
    """Lua opening of the append scripts: 0 (refused) unless ``owner`` (an ARGV) is ''
    or the node holding the room's lease (KEYS[3]); then ``seq``, the next sequence
    number of the room's log (KEYS[1])."""
    return f"""
if {owner} ~= '' and redis.call('GET', KEYS[3]) ~= {owner} then
  return 0
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seq = 1
if #last > 0 then
  seq = tonumber(string.match(last[1][1], '^(%d+)')) + 1
end
"""


# KEYS: log, channel, lease; ARGV: the event (a msgpack map), expected seq or "", "1" when
# the map holds its seq already (the expected one) else "" (seq is added as its last
# entry), owner or "" (fencing: with an owner, only the node holding the room's lease
# may append)
_APPEND = (
    _fenced_next_seq("ARGV[4]")
    + """\
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= seq then
  return -seq
end
local ev = ARGV[1]
if ARGV[3] ~= '1' then
  local b = string.byte(ev, 1)
  local head, body
  if b >= 0x80 and b < 0x8f then
    head, body = string.char(b + 1), string.sub(ev, 2)
  elseif b == 0x8f then
    head, body = string.char(0xde, 0, 16), string.sub(ev, 2)
  elseif b == 0xde and string.byte(ev, 2) * 256 + string.byte(ev, 3) < 65535 then
    local n = string.byte(ev, 2) * 256 + string.byte(ev, 3) + 1
    head, body = string.char(0xde, math.floor(n / 256), n % 256), string.sub(ev, 4)
  else
    return redis.error_reply('ERR an event must be a msgpack map of under 65,535 entries')
  end
  ev = head .. body .. cmsgpack.pack('seq') .. cmsgpack.pack(seq)
end
redis.call('XADD', KEYS[1], seq .. '-1', 'e', ev)
redis.call('PUBLISH', KEYS[2], ev)
return seq
"""
)

# KEYS: as _APPEND, then room; ARGV: as _APPEND, then the room's settings JSON (set when
# the append is accepted)
_APPEND_SAVING_ROOM = _APPEND.replace(
    "local ev = ARGV[1]", "redis.call('SET', KEYS[4], ARGV[5])\nlocal ev = ARGV[1]"
)

#: the upsert event's head (_UPSERT_HEAD) as a Lua string literal, byte by byte
_LUA_UPSERT_HEAD = "'" + "".join(f"\\{b:03d}" for b in _UPSERT_HEAD) + "'"

# appended to an append script: KEYS: ..., lobby hash, lobby channel; ARGV: ..., room id,
# summary (msgpack): the room's lobby entry set and its upsert published (as _LOBBY_UPSERT)
# once the event is appended
_WITH_LOBBY = (
    "redis.call('HSET', KEYS[#KEYS - 1], ARGV[#ARGV - 1], ARGV[#ARGV])\n"
    f"redis.call('PUBLISH', KEYS[#KEYS], {_LUA_UPSERT_HEAD} .. ARGV[#ARGV])\n"
    "return seq\n"
)
_APPEND_LOBBY = _APPEND.replace("return seq\n", _WITH_LOBBY)
_APPEND_SAVING_ROOM_LOBBY = _APPEND_SAVING_ROOM.replace("return seq\n", _WITH_LOBBY)

# KEYS: log, channel, lease, room, lobby hash, lobby channel; ARGV: owner or "" (fencing
# as in _APPEND), the first event's expected seq, the room's settings JSON or "" (set when
# the appends are accepted), room id, lobby summary (msgpack) or "", then the events
# (msgpack maps holding their seqs): all appended and published in order, or none
_APPEND_MANY = (
    _fenced_next_seq("ARGV[1]") + """\
if tonumber(ARGV[2]) ~= seq then
  return -seq
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[4], ARGV[3])
end
for i = 6, #ARGV do
  redis.call('XADD', KEYS[1], seq .. '-1', 'e', ARGV[i])
  redis.call('PUBLISH', KEYS[2], ARGV[i])
  seq = seq + 1
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[5], ARGV[4], ARGV[5])
"""
    f"  redis.call('PUBLISH', KEYS[6], {_LUA_UPSERT_HEAD} .. ARGV[5])\n"
    """end
return seq - 1
"""
)

# KEYS: lease; ARGV: node, ttl ms
_ACQUIRE = """
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: leases; ARGV: node, ttl ms; returns the (1-based) indexes of leases not held
_RENEW_MANY = """
local lost = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

# KEYS: counter, record, record index; ARGV: game id, record JSON
_PUT_RECORD = """
local n = redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], n, ARGV[1])
return n
"""

# KEYS: room, lease, log; ARGV: invite key prefix
_DELETE_ROOM = """
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, meta = pcall(cjson.decode, raw)
  if ok and type(meta) == 'table' and type(meta.invite) == 'string' and meta.invite ~= '' then
    redis.call('DEL', ARGV[1] .. meta.invite)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
"""

# KEYS: room, lease, log, lobby, lobby channel; ARGV: invite key prefix, room id, remove
# event JSON: the lobby entry goes (published if it was there), then as _DELETE_ROOM
_DROP_CLOSED_ROOM = (
    """
if redis.call('HDEL', KEYS[4], ARGV[2]) == 1 then
  redis.call('PUBLISH', KEYS[5], ARGV[3])
end
"""
    + _DELETE_ROOM
)

# KEYS: lease, room[, invite]; ARGV: node, ttl ms, settings JSON[, room id]
_OPEN_ROOM = """
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
if #KEYS > 2 then redis.call('SET', KEYS[3], ARGV[4]) end
return 1
"""

# KEYS: session, token prefix; ARGV: data JSON
_UPDATE_SESSION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[1])
return 1
"""

# KEYS: sessions; ARGV: their data JSON, in the same order
_UPDATE_SESSIONS = """
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'd', ARGV[i])
  end
end
return 1
"""

# KEYS: session; ARGV: ttl ms, token key prefix
_TOUCH_SESSION = """
local t = redis.call('HGET', KEYS[1], 't')
if not t then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', ARGV[2] .. t, ARGV[1])
return 1
"""

# KEYS: lobby hash, lobby channel; ARGV: room id, summary, upsert event (msgpack both)
_LOBBY_UPSERT = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', KEYS[2], ARGV[3])
return 1
"""

# KEYS: lobby hash, lobby channel; ARGV: room id, remove event JSON
_LOBBY_REMOVE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('PUBLISH', KEYS[2], ARGV[2])
end
return 1
"""


class RedisSubscription(Subscription):
    """One channel on a connection of its own; published messages are parsed as they
    arrive (no reader task) into a bounded queue."""

    def __init__(self, resp: RespClient, channel: str, hub: set[Any]) -> None:
        self._resp = resp
        self._hub = hub
        self._channel = channel
        self._queue: asyncio.Queue[Any] = asyncio.Queue(SUBSCRIBER_BACKLOG + 1)
        self._closed = False
        self._conn: Connection | None = None

    async def open(self, timeout: float) -> None:
        """Subscribe and wait for Redis to confirm, so nothing published after is missed."""
        try:
            async with asyncio.timeout(timeout):
                self._conn = conn = await self._resp.connect()
                conn.on_push = self._on_push
                conn.on_lost = self._end
                reply = await conn.send(encode(("SUBSCRIBE", self._channel)))
            if type(reply) is ReplyError:
                raise RespConnectionError(f"redis refused the subscription: {reply}")
        except BaseException:
            self._end()
            raise
        if self._closed:  # lost while confirming
            raise RespConnectionError("the subscription's connection broke")
        self._hub.add(self)

    def _on_push(self, item: Any) -> None:
        if self._closed or type(item) is not list or len(item) != 3 or item[0] != b"message":
            return
        if self._queue.qsize() >= SUBSCRIBER_BACKLOG:
            self._end()  # too far behind: dropped, the reader catches up from the log
            return
        try:
            self._queue.put_nowait(_load(item[2]))
        except ValueError:  # not ours: a subscriber cannot trust the channel any more
            self._end()

    def _end(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._hub.discard(self)
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(_CLOSED)
        if self._conn is not None:
            self._conn.on_lost = None
            self._conn.close()

    async def __anext__(self) -> JSON:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is _CLOSED:
            self._queue.put_nowait(_CLOSED)  # later calls end too
            raise StopAsyncIteration
        return item

    async def close(self) -> None:
        self._end()


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
        self.observe: Callable[[str, float, str | None], None] = _ignore
        # single commands (most of a room's traffic) go through one lean pipelined
        # connection: see server.presence.resp for why
        self._resp = RespClient(
            url, timeout=socket_timeout, connect_timeout=connect_timeout, locate=locate
        )
        self._renew_many = self.redis.register_script(_RENEW_MANY)
        self._append = _Lua(_APPEND)
        self._append_saving_room = _Lua(_APPEND_SAVING_ROOM)
        self._append_lobby = _Lua(_APPEND_LOBBY)
        self._append_many = _Lua(_APPEND_MANY)
        self._append_saving_room_lobby = _Lua(_APPEND_SAVING_ROOM_LOBBY)
        self._acquire = _Lua(_ACQUIRE)
        self._renew = _Lua(_RENEW)
        self._release = _Lua(_RELEASE)
        self._delete_room = _Lua(_DELETE_ROOM)
        self._drop_closed_room = _Lua(_DROP_CLOSED_ROOM)
        self._open_room = _Lua(_OPEN_ROOM)
        self._put_record = _Lua(_PUT_RECORD)
        self._update_session = _Lua(_UPDATE_SESSION)
        self._update_sessions = _Lua(_UPDATE_SESSIONS)
        self._touch_session = _Lua(_TOUCH_SESSION)
        self._lobby_remove = _Lua(_LOBBY_REMOVE)
        self._lobby_upsert = _Lua(_LOBBY_UPSERT)

    def k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

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

    @_guard
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
    @_guard
    async def create_session(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        h = secret_hash(token)
        skey, tkey = self.k("sess", session_id), self.k("tok", h)
        async with self.redis.pipeline(transaction=True) as p:
            p.delete(skey)
            p.hset(skey, mapping={"d": _dumps(data), "t": h})
            p.pexpire(skey, _ms(ttl))
            p.set(tkey, session_id, px=_ms(ttl))
            await p.execute()

    async def get_session(self, session_id: str) -> JSON | None:
        raw = await self._x("HGET", self.k("sess", session_id), "d")
        return None if raw is None else json.loads(raw)

    async def update_session(self, session_id: str, data: JSON) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self._lua(self._update_session, keys, _dumps(data)))

    async def update_sessions(self, data: dict[str, JSON]) -> None:
        """One script (for a loop step's saves)."""
        if data:
            keys = [self.k("sess", i) for i in data]
            await self._lua(self._update_sessions, keys, *map(_dumps, data.values()))

    async def touch_session(self, session_id: str, ttl: float) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self._lua(self._touch_session, keys, _ms(ttl), self.k("tok", "")))

    @_guard
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

    @_guard
    async def end_session(self, session_id: str) -> None:
        skey = self.k("sess", session_id)
        h = await self.redis.hget(skey, "t")
        keys = [skey] + ([self.k("tok", h)] if h else [])
        await self.redis.delete(*keys)

    # -- name claims ------------------------------------------------------------
    @_guard
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
        packed = _pack(summary)
        keys = [self.k("lobby"), self.k("ch", "lobby")]
        await self._lua(self._lobby_upsert, keys, room_id, packed, _UPSERT_HEAD + packed)

    async def lobby_remove(self, room_id: str) -> None:
        keys = [self.k("lobby"), self.k("ch", "lobby")]
        event = _dumps({"op": "remove", "room_id": room_id})
        await self._lua(self._lobby_remove, keys, room_id, event)

    async def lobby_list(self) -> list[JSON]:
        flat = await self._x("HGETALL", self.k("lobby"), raw=True)
        entries = dict(zip(flat[::2], flat[1::2], strict=True))
        return [_load(entries[k]) for k in sorted(entries)]

    async def subscribe_lobby(self) -> Subscription:
        return await self._subscribe(self.k("ch", "lobby"))

    # -- rooms ------------------------------------------------------------------
    @_guard
    async def put_room(self, room_id: str, meta: JSON) -> None:
        invite = meta.get("invite")
        if not (isinstance(invite, str) and invite):
            await self._x("SET", self.k("room", room_id), _dumps(meta))
            return
        async with self.redis.pipeline(transaction=True) as p:
            p.set(self.k("room", room_id), _dumps(meta))
            p.set(self.k("invite", invite), room_id)
            await p.execute()

    @_guard
    async def find_invite(self, code: str) -> str | None:
        """The room a private room's invite code opens (any node's)."""
        return await self.redis.get(self.k("invite", code))

    async def get_room(self, room_id: str) -> JSON | None:
        raw = await self._x("GET", self.k("room", room_id))
        return None if raw is None else json.loads(raw)

    async def delete_room(self, room_id: str) -> None:
        keys = [self.k("room", room_id), self.k("lease", room_id), self.k("log", room_id)]
        await self._lua(self._delete_room, keys, self.k("invite", ""))

    async def drop_closed_room(self, room_id: str, node_id: str) -> None:
        """One script (the lease goes whoever holds it, as with ``delete_room``)."""
        keys = [self.k("room", room_id), self.k("lease", room_id), self.k("log", room_id)]
        keys += [self.k("lobby"), self.k("ch", "lobby")]
        event = _dumps({"op": "remove", "room_id": room_id})
        await self._lua(self._drop_closed_room, keys, self.k("invite", ""), room_id, event)

    async def open_room(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        keys, args = [self.k("lease", room_id), self.k("room", room_id)], [node_id, _ms(ttl)]
        args.append(_dumps(meta))
        invite = meta.get("invite")
        if isinstance(invite, str) and invite:
            keys.append(self.k("invite", invite))
            args.append(room_id)
        return bool(await self._lua(self._open_room, keys, *args))

    async def acquire_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        return bool(await self._lua(self._acquire, [self.k("lease", room_id)], node_id, _ms(ttl)))

    async def renew_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        return bool(await self._lua(self._renew, [self.k("lease", room_id)], node_id, _ms(ttl)))

    @_guard
    async def renew_rooms(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        """One script per 1,000 rooms, concurrently, on pooled connections of their own
        (not queued behind the batcher's commands)."""
        chunks = [room_ids[i : i + 1000] for i in range(0, len(room_ids), 1000)]
        args = [node_id, _ms(ttl)]
        results = await asyncio.gather(
            *(self._renew_many([self.k("lease", r) for r in c], args, self.redis) for c in chunks)
        )
        return [c[i - 1] for c, indexes in zip(chunks, results, strict=True) for i in indexes]

    async def release_room(self, room_id: str, node_id: str) -> bool:
        return bool(await self._lua(self._release, [self.k("lease", room_id)], node_id))

    async def room_owner(self, room_id: str) -> str | None:
        return await self._x("GET", self.k("lease", room_id))

    @_guard
    async def room_owners(self, room_ids: list[str]) -> dict[str, str | None]:
        """The owners of several rooms in one round trip (for lease sweeps)."""
        if not room_ids:
            return {}
        owners = await self.redis.mget([self.k("lease", r) for r in room_ids])
        return dict(zip(room_ids, owners, strict=True))

    # -- event log --------------------------------------------------------------
    async def append_event(
        self, room_id: str, event: JSON, expected_seq: int | None = None, owner: str | None = None
    ) -> int:
        return await self._append_packed(room_id, event, b"", expected_seq, owner, None)

    async def append_packed(
        self,
        room_id: str,
        event: JSON,
        packed: bytes,
        expected_seq: int | None = None,
        owner: str | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """``append_event`` of an event the room has packed already (its binary frame,
        holding the expected seq): stored as it is, not packed again; the lobby entry in
        the same script."""
        return await self._append_packed(room_id, event, packed, expected_seq, owner, None, lobby)

    async def append_packed_saving_room(
        self,
        room_id: str,
        event: JSON,
        packed: bytes,
        expected_seq: int,
        meta: JSON,
        owner: str | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """One script; the settings (and the lobby entry) are stored only if the append is
        accepted."""
        if isinstance(meta.get("invite"), str):  # put_room keeps the invite key too
            return await super().append_packed_saving_room(
                room_id, event, packed, expected_seq, meta, owner, lobby
            )
        return await self._append_packed(room_id, event, packed, expected_seq, owner, meta, lobby)

    async def _append_packed(
        self,
        room_id: str,
        event: JSON,
        packed: bytes,
        expected_seq: int | None,
        owner: str | None,
        meta: JSON | None,
        lobby: JSON | None = None,
    ) -> int:
        if not packed or expected_seq is None or event.get("seq") != expected_seq:
            packed, has_seq = self._packed(event, expected_seq)
        else:
            has_seq = "1"
        keys = [self.k("log", room_id), self.k("ch", "room", room_id), self.k("lease", room_id)]
        expected = "" if expected_seq is None else expected_seq
        args = [packed, expected, has_seq, owner or ""]
        script = self._append
        if meta is not None:
            keys.append(self.k("room", room_id))
            args.append(_dumps(meta))
            script = self._append_saving_room
        if lobby is not None:
            keys += (self.k("lobby"), self.k("ch", "lobby"))
            args += (room_id, _pack(lobby))
            script = self._append_lobby if meta is None else self._append_saving_room_lobby
        seq = int(await self._lua(script, keys, *args))
        if seq == 0:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        if seq < 0:
            raise SeqConflict(f"room {room_id}: next seq is {-seq}, not {expected_seq}")
        return seq

    async def append_packed_many(
        self,
        room_id: str,
        events: list[tuple[JSON, bytes]],
        expected_seq: int,
        owner: str | None = None,
        meta: JSON | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """One script: every event or none, the settings and lobby entry with them."""
        if meta is not None and isinstance(meta.get("invite"), str):  # put_room: invite key
            return await super().append_packed_many(
                room_id, events, expected_seq, owner, meta, lobby
            )
        packs = []
        for seq, (event, packed) in enumerate(events, expected_seq):
            if not packed or event.get("seq") != seq:
                packed = _pack({**event, "seq": seq})
            packs.append(packed)
        keys = [self.k("log", room_id), self.k("ch", "room", room_id), self.k("lease", room_id)]
        keys += (self.k("room", room_id), self.k("lobby"), self.k("ch", "lobby"))
        args = [owner or "", expected_seq, "" if meta is None else _dumps(meta), room_id]
        args.append(b"" if lobby is None else _pack(lobby))
        seq = int(await self._lua(self._append_many, keys, *args, *packs))
        if seq == 0:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        if seq < 0:
            raise SeqConflict(f"room {room_id}: next seq is {-seq}, not {expected_seq}")
        return seq

    @staticmethod
    def _packed(event: JSON, expected_seq: int | None) -> tuple[bytes, str]:
        """The event packed, and "1" if it holds its (expected) seq, else "" (the script
        adds it) with any other seq taken out."""
        if expected_seq is not None and event.get("seq") == expected_seq:
            return _pack(event), "1"  # a room's event: its seq is in place already
        if "seq" in event:
            event = {k: v for k, v in event.items() if k != "seq"}
        return _pack(event), ""

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

    async def _lua(self, script: _Lua, keys: list[str], *args: Any) -> Any:
        try:
            return await self._x("EVALSHA", script.sha, len(keys), *keys, *args)
        except PresenceError as exc:
            if not str(exc).startswith("redis: ReplyError: NOSCRIPT"):
                raise
        return await self._x("EVAL", script.text, len(keys), *keys, *args)  # (caches it)

    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        args: list[Any] = ["XRANGE", self.k("log", room_id), f"{max(after_seq, 0) + 1}-0", "+"]
        if limit is not None:
            args += ["COUNT", limit]
        entries = await self._x(*args, raw=True)
        return [_load(fields[1]) for _, fields in entries]

    async def last_seq(self, room_id: str) -> int:
        last = await self._x("XREVRANGE", self.k("log", room_id), "+", "-", "COUNT", 1, raw=True)
        return int(last[0][0].split(b"-", 1)[0]) if last else 0

    async def subscribe_room(self, room_id: str) -> Subscription:
        return await self._subscribe(self.k("ch", "room", room_id))

    # -- node-to-node messages (server.cluster) ------------------------------------------
    @_guard
    async def publish_node(self, node_id: str, messages: list[str]) -> None:
        """Publish JSON texts to a node's channel, in order, in one round trip."""
        channel = self.k("ch", "node", node_id)
        async with self.redis.pipeline(transaction=False) as p:
            for text in messages:
                p.publish(channel, text)
            await p.execute()

    async def subscribe_node(self, node_id: str) -> Subscription:
        return await self._subscribe(self.k("ch", "node", node_id))

    async def node_heartbeat(self, node_id: str, ttl: float) -> None:
        await self._x("SET", self.k("node", node_id), "1", "PX", _ms(ttl))

    @_guard
    async def nodes_alive(self, node_ids: list[str]) -> dict[str, bool]:
        if not node_ids:
            return {}
        found = await self.redis.mget([self.k("node", n) for n in node_ids])
        return {n: v is not None for n, v in zip(node_ids, found, strict=True)}

    @_guard
    async def node_gone(self, node_id: str) -> None:
        await self.redis.delete(self.k("node", node_id))

    # -- quick match --------------------------------------------------------------
    @_guard
    async def queue_add(self, queue: str, player: str, rating: float, data: JSON) -> None:
        n = await self.redis.incr(self.k("n"))
        async with self.redis.pipeline(transaction=True) as p:
            p.zadd(self.k("q", queue), {player: n})
            p.hset(self.k("qd", queue), player, _dumps({"rating": rating, "data": data}))
            await p.execute()

    @_guard
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

    @_guard
    async def queue_list(self, queue: str) -> list[JSON]:
        return await self._queue_entries(self.redis, queue)

    @_guard
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

    @_guard
    async def put_ratings(self, game: str, ratings: dict[str, JSON]) -> None:
        if not ratings:
            return
        async with self.redis.pipeline(transaction=True) as p:
            p.hset(self.k("rating", game), mapping={n: _dumps(r) for n, r in ratings.items()})
            p.zadd(self.k("board", game), {n: -float(r["rating"]) for n, r in ratings.items()})
            await p.execute()

    @_guard
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
        await self._lua(self._put_record, keys, game_id, _dumps(record))

    async def get_record(self, game_id: str) -> JSON | None:
        raw = await self._x("GET", self.k("rec", game_id))
        return None if raw is None else json.loads(raw)

    @_guard
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
