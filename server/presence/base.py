"""The presence interface: everything the server shares beyond one room's memory.

Sessions, name claims, the lobby, rooms (settings and event logs), their ownership
leases, the node bus, quick-match queues, ratings and game records: one small port
each (``presence.sessions``...), composed in one :class:`Presence`.
One node keeps them in SQLite by default (:mod:`server.presence.sqlite`, durable)
or in process memory (:mod:`server.presence.memory`); a Redis implementation lets
several nodes share them. So that both behave alike, the interface promises only this:

- every method is ``async`` and may fail with :class:`PresenceError` (a storage
  outage), which the server answers with a typed error, never a hang;
- values in and out are JSON-able (dicts of str/int/float/bool/None/lists), and
  what comes out is a copy: mutating it changes nothing stored, and nothing may
  rely on object identity;
- times are TTLs in seconds (floats, millisecond resolution) measured by the
  store, never absolute clocks of a node;
- a room's append (``rooms.append``) has completed (durably, as far as the store
  goes) before it returns, so a room tells nobody a move was accepted before
  the move is in the log;
- subscriptions (``lobby.subscribe``, ``bus.subscribe``) are registered before
  ``subscribe`` returns, so no event published afterwards is missed; a subscriber
  that falls too far behind may be dropped (its iterator ends) and must start
  again from a fresh read.

The contract is pinned by ``tests/test_presence_contract.py``, which every
implementation must pass.
"""

from __future__ import annotations

import asyncio
from abc import ABC
from collections.abc import Callable

from server.presence.bus import NodeBus
from server.presence.leases import Leases
from server.presence.lobby import Lobby
from server.presence.names import Names
from server.presence.queues import Queues
from server.presence.ratings import Ratings
from server.presence.records import Records
from server.presence.rooms import Rooms
from server.presence.sessions import Sessions
from server.presence.values import (
    JSON,
    LeaseLost,
    PresenceError,
    SeqConflict,
    Subscription,
    copy_json,
    name_key,
    secret_hash,
)

__all__ = [
    "JSON",
    "LeaseLost",
    "Presence",
    "PresenceError",
    "SeqConflict",
    "Subscription",
    "copy_json",
    "name_key",
    "secret_hash",
]


class Presence(ABC):
    """Shared state of the arena; see the module docstring for the contract."""

    #: key prefix, so several deployments or test runs can share one store
    prefix: str = ""
    #: several nodes can share this store (it has a node bus: ``bus``)
    shared: bool = False
    #: the node bus (server.presence.bus), on a shared store only
    bus: NodeBus | None = None
    #: the ports it is composed of (server.presence.queues...)
    leases: Leases
    lobby: Lobby
    names: Names
    queues: Queues
    ratings: Ratings
    records: Records
    rooms: Rooms
    sessions: Sessions

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Connect; the memory store needs nothing."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and end every subscription."""

    def barrier(self) -> asyncio.Future[None] | None:
        """Output commit: the future of the last change not yet on disk (None: all are).

        A store that commits in the background (SQLite's group commit) returns from a
        change at once; nothing that tells a client of the change may go out before
        this future is done (server.connection holds the frames). Redis and memory
        answer a change once it is made: None.
        """
        return None

    def add_commit_listener(self, fn: Callable[[], None]) -> None:  # noqa: B027 - optional
        """Call ``fn`` as soon as changes reach the disk, in the loop step that learns
        of it (a :meth:`barrier` future's callbacks run a step later); a store that
        answers a change once it is made never calls it."""

    def poll_commits(self) -> None:  # noqa: B027 - optional
        """Take in the disk's answers that have come (calling the commit listeners)
        without waiting for the loop's next look at them; nothing to do by default."""

    async def settled(self) -> None:
        """Wait until every change made so far is on disk (see :meth:`barrier`); for
        a reader that acts on what it reads somewhere the barrier does not hold."""
        barrier = self.barrier()
        if barrier is not None:
            await asyncio.shield(barrier)
