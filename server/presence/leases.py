"""The leases port of presence: which node owns (is the authority of) each room. The
owner renews its leases; a lease it stops renewing lapses, and another node may take
the room over (server.cluster). Appends are fenced by it
(:meth:`server.presence.rooms.Rooms.append` with ``owner``). In memory
(:class:`MemoryLeases`: the SQLite store's too, as its data dir's lock admits no other
node) or in Redis (:mod:`server.presence.redis_leases`)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod


class Leases(ABC):
    """Room ownership leases: ``presence.leases``; TTLs in seconds."""

    @abstractmethod
    async def acquire(self, room_id: str, node_id: str, ttl: float) -> bool:
        """Become the room's owner if nobody holds a live lease (or we already do)."""

    @abstractmethod
    async def renew(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        """Extend our leases of several rooms; returns those we no longer hold.

        A node renews every room it owns at once: one round trip where the store
        allows it, so that a busy node's renewals cannot fall behind its leases.
        """

    @abstractmethod
    async def release(self, room_id: str, node_id: str) -> bool:
        """Give up our lease; False if we did not hold it."""

    @abstractmethod
    async def owner(self, room_id: str) -> str | None:
        """The node holding the room's live lease, if any."""

    @abstractmethod
    async def owners(self, room_ids: list[str]) -> dict[str, str | None]:
        """The owners of several rooms (for lease sweeps), in one round trip where the
        store allows it."""


class MemoryLeases(Leases):
    """Leases in this process, checked lazily against :func:`time.monotonic`."""

    def __init__(self) -> None:
        #: room id -> (node, monotonic expiry)
        self.held: dict[str, tuple[str, float]] = {}

    def holder(self, room_id: str) -> str | None:
        """The live lease's node (an expired lease is dropped here)."""
        lease = self.held.get(room_id)
        if lease is None or lease[1] <= time.monotonic():
            self.held.pop(room_id, None)
            return None
        return lease[0]

    async def acquire(self, room_id: str, node_id: str, ttl: float) -> bool:
        if self.holder(room_id) not in (None, node_id):
            return False
        self.held[room_id] = (node_id, time.monotonic() + ttl)
        return True

    async def renew(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        lost, expiry = [], time.monotonic() + ttl
        for room_id in room_ids:
            if self.holder(room_id) == node_id:
                self.held[room_id] = (node_id, expiry)
            else:
                lost.append(room_id)
        return lost

    async def release(self, room_id: str, node_id: str) -> bool:
        if self.holder(room_id) != node_id:
            return False
        del self.held[room_id]
        return True

    async def owner(self, room_id: str) -> str | None:
        return self.holder(room_id)

    async def owners(self, room_ids: list[str]) -> dict[str, str | None]:
        return {r: self.holder(r) for r in room_ids}
