"""In-process presence: one node, nothing kept, nothing else to run (the tests' store).

Everything is copied in and out (through JSON-able copies) so callers cannot come
to rely on shared objects, as they could not with Redis. TTLs are checked lazily
against :func:`time.monotonic`. The ports are the in-memory ones, which the SQLite
store writes through.
"""

from __future__ import annotations

from server.presence.base import Presence
from server.presence.leases import MemoryLeases
from server.presence.lobby import MemoryLobby
from server.presence.names import MemoryNames, Names
from server.presence.queues import MemoryQueues, Queues
from server.presence.ratings import MemoryRatings, Ratings
from server.presence.records import MemoryRecords, Records
from server.presence.rooms import MemoryRooms
from server.presence.sessions import MemorySessions, Sessions
from server.presence.values import SUBSCRIBER_BACKLOG, MemorySubscription

__all__ = ["SUBSCRIBER_BACKLOG", "MemoryPresence", "MemorySubscription"]


class MemoryPresence(Presence):
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.sessions: Sessions = MemorySessions()
        self.names: Names = MemoryNames()
        self.lobby: MemoryLobby = MemoryLobby()
        self.leases: MemoryLeases = MemoryLeases()
        #: (its appends fenced by those leases, setting entries of that lobby)
        self.rooms: MemoryRooms = MemoryRooms(self.leases, self.lobby)
        self.queues: Queues = MemoryQueues()
        self.ratings: Ratings = MemoryRatings()
        self.records: Records = MemoryRecords()

    async def close(self) -> None:
        await self.lobby.close()
