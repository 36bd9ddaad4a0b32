"""The lobby port of presence: the public rooms' summaries, and the feed of their changes
that every node's lobby watchers follow. In memory (:class:`MemoryLobby`), written
through to SQLite (:class:`server.presence.sqlite_rooms.SqliteLobby`), or in Redis
(:mod:`server.presence.redis_lobby`). A room's append may set its entry in the same
step (:meth:`server.presence.rooms.Rooms.append`)."""

from __future__ import annotations

from abc import ABC, abstractmethod

import msgpack

from server.presence.values import JSON, MemorySubscription, Subscription

#: one packer, reused: ``msgpack.packb`` builds a new one (and its buffer) for every call
_pack = msgpack.Packer(use_bin_type=True).pack


class Lobby(ABC):
    """The lobby: ``presence.lobby``."""

    @abstractmethod
    async def upsert(self, room_id: str, summary: JSON) -> None:
        """Add or replace a room's entry and publish ``{"op": "upsert", "room": summary}``."""

    @abstractmethod
    async def remove(self, room_id: str) -> None:
        """Drop the entry and publish ``{"op": "remove", "room_id": room_id}`` if it existed."""

    @abstractmethod
    async def entries(self) -> list[JSON]:
        """Every entry, ordered by room id."""

    @abstractmethod
    async def subscribe(self) -> Subscription:
        """Every change from now on (see :class:`Subscription`)."""


class MemoryLobby(Lobby):
    """Entries kept packed (msgpack): packing is the copy going in, unpacking the copy
    coming out, done only when read."""

    def __init__(self) -> None:
        #: room id -> its packed upsert event
        self.packed: dict[str, bytes] = {}
        self.subs: set[MemorySubscription] = set()

    def _publish(self, packed: bytes) -> None:
        for sub in list(self.subs):
            sub.publish_packed(packed)

    async def upsert(self, room_id: str, summary: JSON) -> None:
        packed = _pack({"op": "upsert", "room": summary})  # one copy: the entry and the event
        self.packed[room_id] = packed
        self._publish(packed)

    async def remove(self, room_id: str) -> None:
        if self.packed.pop(room_id, None) is not None:
            self._publish(_pack({"op": "remove", "room_id": room_id}))

    async def entries(self) -> list[JSON]:
        return [msgpack.unpackb(self.packed[k], raw=False)["room"] for k in sorted(self.packed)]

    async def subscribe(self) -> Subscription:
        return MemorySubscription(self.subs)

    async def close(self) -> None:
        """End every subscription (the store closes)."""
        for sub in list(self.subs):
            await sub.close()
