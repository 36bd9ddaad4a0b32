"""In-process presence: the default for a single node, nothing else to run.

Everything is deep-copied in and out (through JSON-able copies) so callers
cannot come to rely on shared objects, as they could not with Redis. TTLs are
checked lazily against :func:`time.monotonic`. Event logs, lobby entries and
what subscribers wait for are kept packed (msgpack ``bytes``): packing is the
copy going in, and unpacking, done only when read, the copy coming out.
"""

from __future__ import annotations

import time
from collections import defaultdict

import msgpack

from server.presence.base import (
    JSON,
    LeaseLost,
    Presence,
    SeqConflict,
    Subscription,
    copy_json,
)
from server.presence.names import MemoryNames, Names
from server.presence.queues import MemoryQueues, Queues
from server.presence.ratings import MemoryRatings, Ratings
from server.presence.records import MemoryRecords, Records
from server.presence.sessions import MemorySessions, Sessions
from server.presence.values import SUBSCRIBER_BACKLOG, MemorySubscription

__all__ = ["SUBSCRIBER_BACKLOG", "MemoryPresence", "MemorySubscription"]

#: one packer, reused: ``msgpack.packb`` builds a new one (and its buffer) for every call
_pack = msgpack.Packer(use_bin_type=True).pack
_copy = copy_json


class MemoryPresence(Presence):
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.sessions: Sessions = MemorySessions()
        self.names: Names = MemoryNames()
        self._lobby: dict[str, bytes] = {}  # room id -> its packed upsert event
        self._lobby_subs: set[MemorySubscription] = set()
        self._rooms: dict[str, JSON] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        # packed events (a copy for free, cheaper than deepcopy or JSON); index = seq - 1
        self._events: dict[str, list[bytes]] = defaultdict(list)
        self._room_subs: dict[str, set[MemorySubscription]] = defaultdict(set)
        self.queues: Queues = MemoryQueues()
        self.ratings: Ratings = MemoryRatings()
        self.records: Records = MemoryRecords()

    async def close(self) -> None:
        for sub in list(self._lobby_subs):
            await sub.close()
        for subs in self._room_subs.values():
            for sub in list(subs):
                await sub.close()

    # -- lobby ------------------------------------------------------------------
    def _publish_lobby(self, packed: bytes) -> None:
        for sub in list(self._lobby_subs):
            sub.publish_packed(packed)

    async def lobby_upsert(self, room_id: str, summary: JSON) -> None:
        packed = _pack({"op": "upsert", "room": summary})  # one copy: the entry and the event
        self._lobby[room_id] = packed
        self._publish_lobby(packed)

    async def lobby_remove(self, room_id: str) -> None:
        if self._lobby.pop(room_id, None) is not None:
            self._publish_lobby(_pack({"op": "remove", "room_id": room_id}))

    async def lobby_list(self) -> list[JSON]:
        return [msgpack.unpackb(self._lobby[k], raw=False)["room"] for k in sorted(self._lobby)]

    async def subscribe_lobby(self) -> Subscription:
        return MemorySubscription(self._lobby_subs)

    # -- rooms ------------------------------------------------------------------
    async def put_room(self, room_id: str, meta: JSON) -> None:
        self._rooms[room_id] = _copy(meta)

    async def get_room(self, room_id: str) -> JSON | None:
        return _copy(self._rooms.get(room_id))

    async def delete_room(self, room_id: str) -> None:
        self._rooms.pop(room_id, None)
        self._leases.pop(room_id, None)
        self._events.pop(room_id, None)

    def _lease(self, room_id: str) -> str | None:
        lease = self._leases.get(room_id)
        if lease is None or lease[1] <= time.monotonic():
            self._leases.pop(room_id, None)
            return None
        return lease[0]

    async def acquire_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        owner = self._lease(room_id)
        if owner not in (None, node_id):
            return False
        self._leases[room_id] = (node_id, time.monotonic() + ttl)
        return True

    async def renew_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        if self._lease(room_id) != node_id:
            return False
        self._leases[room_id] = (node_id, time.monotonic() + ttl)
        return True

    async def release_room(self, room_id: str, node_id: str) -> bool:
        if self._lease(room_id) != node_id:
            return False
        del self._leases[room_id]
        return True

    async def room_owner(self, room_id: str) -> str | None:
        return self._lease(room_id)

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
        if owner is not None and self._lease(room_id) != owner:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        log = self._events[room_id]
        if len(log) + 1 != first:
            raise SeqConflict(room_id, len(log) + 1, first)
        if meta is not None:
            await self.put_room(room_id, meta)
        subs = self._room_subs.get(room_id)
        seq = first - 1
        for seq, (event, packed) in enumerate(logged, first):
            if not packed or event.get("seq") != seq:  # no bytes, or bytes of another seq
                packed = _pack({**event, "seq": seq})
            log.append(packed)
            self._logged(room_id, log, seq)
            if subs:
                for sub in list(subs):
                    sub.publish_packed(packed)
        if lobby is not None:
            await self.lobby_upsert(room_id, lobby)
        return seq

    def _logged(self, room_id: str, log: list[bytes], seq: int) -> None:
        """Event ``seq`` was added to the room's ``log`` (a durable store writes it)."""

    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        log = self._events.get(room_id, [])
        chosen = log[max(after_seq, 0) :]
        if limit is not None:
            chosen = chosen[:limit]
        return [msgpack.unpackb(packed, raw=False) for packed in chosen]

    async def last_seq(self, room_id: str) -> int:
        return len(self._events.get(room_id, []))

    async def subscribe_room(self, room_id: str) -> Subscription:
        return MemorySubscription(self._room_subs[room_id])
