"""Rooms in Redis presence: settings and members, invites, leases (who owns a room)
and the room's event log, appended by the Lua scripts of
:mod:`server.presence.redis_scripts` (mixed into
:class:`server.presence.redis.RedisPresence`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from server.presence.base import JSON, LeaseLost, SeqConflict, Subscription
from server.presence.redis_values import dumps, guard, load, ms, pack


class RedisRooms:
    """Rooms, leases and event logs of :class:`server.presence.redis.RedisPresence`."""

    # -- rooms ------------------------------------------------------------------
    @guard
    async def put_room(self, room_id: str, meta: JSON) -> None:
        invite = meta.get("invite")
        if not (isinstance(invite, str) and invite):
            await self._x("SET", self.k("room", room_id), dumps(meta))
            return
        async with self.redis.pipeline(transaction=True) as p:
            p.set(self.k("room", room_id), dumps(meta))
            p.set(self.k("invite", invite), room_id)
            await p.execute()

    @guard
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

    @guard
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

    @guard
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
            args.append(dumps(meta))
            script = self._append_saving_room
        if lobby is not None:
            keys += (self.k("lobby"), self.k("ch", "lobby"))
            args += (room_id, pack(lobby))
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
                packed = pack({**event, "seq": seq})
            packs.append(packed)
        keys = [self.k("log", room_id), self.k("ch", "room", room_id), self.k("lease", room_id)]
        keys += (self.k("room", room_id), self.k("lobby"), self.k("ch", "lobby"))
        args = [owner or "", expected_seq, "" if meta is None else dumps(meta), room_id]
        args.append(b"" if lobby is None else pack(lobby))
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
            return pack(event), "1"  # a room's event: its seq is in place already
        if "seq" in event:
            event = {k: v for k, v in event.items() if k != "seq"}
        return pack(event), ""

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
