"""Rooms in Redis presence: settings and members, invites, leases (who owns a room)
and the room's event log, appended by the Lua scripts of
:mod:`server.presence.redis_scripts` (mixed into
:class:`server.presence.redis.RedisPresence`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from server.presence.base import JSON, LeaseLost, SeqConflict, Subscription
from server.presence.redis_link import guard
from server.presence.redis_values import dumps, load, ms, pack


class RedisRooms:
    """Rooms, leases and event logs of :class:`server.presence.redis.RedisPresence`."""

    #: room id -> the keys of its append script
    _log_keys_of: dict[str, list[str]]

    # -- rooms ------------------------------------------------------------------
    @guard("put_room")
    async def put_room(self, room_id: str, meta: JSON) -> None:
        invite = meta.get("invite")
        if not (isinstance(invite, str) and invite):
            await self._x("SET", self.k("room", room_id), dumps(meta))
            return
        async with self.redis.pipeline(transaction=True) as p:
            p.set(self.k("room", room_id), dumps(meta))
            p.set(self.k("invite", invite), room_id)
            await p.execute()

    @guard("find_invite")
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
        event = dumps({"op": "remove", "room_id": room_id})
        await self._lua(self._drop_closed_room, keys, self.k("invite", ""), room_id, event)

    async def open_room(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        keys, args = [self.k("lease", room_id), self.k("room", room_id)], [node_id, ms(ttl)]
        args.append(dumps(meta))
        invite = meta.get("invite")
        if isinstance(invite, str) and invite:
            keys.append(self.k("invite", invite))
            args.append(room_id)
        return bool(await self._lua(self._open_room, keys, *args))

    async def acquire_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        return bool(await self._lua(self._acquire, [self.k("lease", room_id)], node_id, ms(ttl)))

    async def renew_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        return bool(await self._lua(self._renew, [self.k("lease", room_id)], node_id, ms(ttl)))

    @guard("renew_rooms")
    async def renew_rooms(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        """One script per 1,000 rooms, concurrently, on pooled connections of their own
        (not queued behind the batcher's commands)."""
        chunks = [room_ids[i : i + 1000] for i in range(0, len(room_ids), 1000)]
        args = [node_id, ms(ttl)]
        results = await asyncio.gather(
            *(self._renew_many([self.k("lease", r) for r in c], args, self.redis) for c in chunks)
        )
        return [c[i - 1] for c, indexes in zip(chunks, results, strict=True) for i in indexes]

    async def release_room(self, room_id: str, node_id: str) -> bool:
        return bool(await self._lua(self._release, [self.k("lease", room_id)], node_id))

    async def room_owner(self, room_id: str) -> str | None:
        return await self._x("GET", self.k("lease", room_id))

    @guard("room_owners")
    async def room_owners(self, room_ids: list[str]) -> dict[str, str | None]:
        """The owners of several rooms in one round trip (for lease sweeps)."""
        if not room_ids:
            return {}
        owners = await self.redis.mget([self.k("lease", r) for r in room_ids])
        return dict(zip(room_ids, owners, strict=True))

    # -- event log --------------------------------------------------------------
    async def append(
        self,
        room_id: str,
        logged: list[tuple[JSON, bytes]],
        first: int,
        owner: str | None = None,
        meta: JSON | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """One script (:data:`~server.presence.redis_scripts.APPEND`, a compare-and-append):
        every event or none, the settings and lobby entry with them. The events go as the
        room packed them (its binary frames, each holding its seq); one packed without
        its seq is packed here, in Python: the script never touches msgpack."""
        if meta is not None and isinstance(meta.get("invite"), str):  # put_room: invite key
            await self.put_room(room_id, meta)
            meta = None
        packs = []
        for seq, (event, packed) in enumerate(logged, first):
            if not packed or event.get("seq") != seq:
                packed = pack({**event, "seq": seq})
            packs.append(packed)
        args = [owner or "", first, "" if meta is None else dumps(meta), room_id]
        args.append(b"" if lobby is None else pack(lobby))
        seq = int(await self._lua(self._append, self._log_keys(room_id), *args, *packs))
        if seq == 0:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        if seq < 0:
            raise SeqConflict(room_id, -seq, first)
        return seq

    def _log_keys(self, room_id: str) -> list[str]:
        """The keys of the append script for a room (made once per room: a move's
        append is the hot path)."""
        cache: dict[str, list[str]] = self._log_keys_of
        keys = cache.get(room_id)
        if keys is None:
            if len(cache) >= 4096:
                cache.clear()
            k = self.k
            keys = cache[room_id] = [
                k("log", room_id),
                k("ch", "room", room_id),
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
        entries = await self._x(*args, raw=True)
        return [load(fields[1]) for _, fields in entries]

    async def last_seq(self, room_id: str) -> int:
        last = await self._x("XREVRANGE", self.k("log", room_id), "+", "-", "COUNT", 1, raw=True)
        return int(last[0][0].split(b"-", 1)[0]) if last else 0

    async def subscribe_room(self, room_id: str) -> Subscription:
        return await self._subscribe(self.k("ch", "room", room_id))
