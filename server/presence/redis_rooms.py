"""The rooms port in Redis (:class:`server.presence.rooms.Rooms`): ``P room:{id}``
(settings and members, JSON), ``P invite:{code}`` (the private room it opens) and
``P log:{id}`` (a stream: entry id ``{seq}-1``, field ``e``, the event as msgpack;
JSON as older versions wrote it is read too).

The append is one script (:data:`~server.presence.redis_scripts.APPEND`, a
compare-and-append) that also checks the room's lease and sets its lobby entry: the
keys of :mod:`~server.presence.redis_leases` and :mod:`~server.presence.redis_lobby`,
reached through the same :class:`~server.presence.redis_link.RedisLink`."""

from __future__ import annotations

import json
from typing import Any

from server.presence.redis_link import RedisLink, guard
from server.presence.redis_scripts import APPEND, DROP_CLOSED_ROOM, OPEN_ROOM, Lua
from server.presence.redis_values import dumps, load, ms, pack
from server.presence.rooms import Rooms
from server.presence.values import JSON, LeaseLost, SeqConflict


class RedisRooms(Rooms):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k
        self._append = Lua(APPEND)
        self._drop_closed = Lua(DROP_CLOSED_ROOM)
        self._open = Lua(OPEN_ROOM)
        #: room id -> the keys of its append script
        self._log_keys_of: dict[str, list[str]] = {}

    @guard("put_room")
    async def put(self, room_id: str, meta: JSON) -> None:
        invite = meta.get("invite")
        if not (isinstance(invite, str) and invite):
            await self.link.x("SET", self.k("room", room_id), dumps(meta))
            return
        async with self.link.redis.pipeline(transaction=True) as p:
            p.set(self.k("room", room_id), dumps(meta))
            p.set(self.k("invite", invite), room_id)
            await p.execute()

    async def get(self, room_id: str) -> JSON | None:
        raw = await self.link.x("GET", self.k("room", room_id))
        return None if raw is None else json.loads(raw)

    @guard("find_invite")
    async def find_invite(self, code: str) -> str | None:
        return await self.link.redis.get(self.k("invite", code))

    async def open(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        keys, args = [self.k("lease", room_id), self.k("room", room_id)], [node_id, ms(ttl)]
        args.append(dumps(meta))
        invite = meta.get("invite")
        if isinstance(invite, str) and invite:
            keys.append(self.k("invite", invite))
            args.append(room_id)
        return bool(await self.link.lua(self._open, keys, *args))

    async def drop_closed(self, room_id: str) -> None:
        """One script."""
        keys = [self.k("room", room_id), self.k("lease", room_id), self.k("log", room_id)]
        keys += [self.k("lobby"), self.k("ch", "lobby")]
        event = dumps({"op": "remove", "room_id": room_id})
        await self.link.lua(self._drop_closed, keys, self.k("invite", ""), room_id, event)

    async def append(
        self,
        room_id: str,
        logged: list[tuple[JSON, bytes]],
        first: int,
        owner: str | None = None,
        meta: JSON | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """One script: every event or none, the settings and lobby entry with them. The
        events go as the room packed them (its binary frames, each holding its seq); one
        packed without its seq is packed here, in Python: the script never touches
        msgpack."""
        if meta is not None and isinstance(meta.get("invite"), str):  # put: the invite key
            await self.put(room_id, meta)
            meta = None
        packs = []
        for seq, (event, packed) in enumerate(logged, first):
            if not packed or event.get("seq") != seq:
                packed = pack({**event, "seq": seq})
            packs.append(packed)
        args = [owner or "", first, "" if meta is None else dumps(meta), room_id]
        args.append(b"" if lobby is None else pack(lobby))
        seq = int(await self.link.lua(self._append, self._log_keys(room_id), *args, *packs))
        if seq == 0:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        if seq < 0:
            raise SeqConflict(room_id, -seq, first)
        return seq

    def _log_keys(self, room_id: str) -> list[str]:
        """The keys of the append script for a room (made once per room: a move's
        append is the hot path)."""
        cache = self._log_keys_of
        keys = cache.get(room_id)
        if keys is None:
            if len(cache) >= 4096:
                cache.clear()
            k = self.k
            keys = cache[room_id] = [
                k("log", room_id),
                k("lease", room_id),
                k("room", room_id),
                k("lobby"),
                k("ch", "lobby"),
            ]
        return keys

    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        args: list[Any] = ["XRANGE", self.k("log", room_id), f"{max(after_seq, 0) + 1}-0", "+"]
        if limit is not None:
            args += ["COUNT", limit]
        entries = await self.link.x(*args, raw=True)
        return [load(fields[1]) for _, fields in entries]

    async def last_seq(self, room_id: str) -> int:
        log = self.k("log", room_id)
        last = await self.link.x("XREVRANGE", log, "+", "-", "COUNT", 1, raw=True)
        return int(last[0][0].split(b"-", 1)[0]) if last else 0
