"""The presence interface: everything the server shares beyond one room's memory.

Sessions, name claims, the lobby, the room registry with ownership leases, each
room's event log, event fan-out, quick-match queues, ratings and game records.
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
- :meth:`Presence.append` has completed (durably, as far as the store
  goes) before it returns, so a room tells nobody a move was accepted before
  the move is in the log;
- subscriptions are registered before ``subscribe_*`` returns, so no event
  published afterwards is missed; a subscriber that falls too far behind may be
  dropped (its iterator ends) and must catch up from the log by ``seq``.

The contract is pinned by ``tests/test_presence_contract.py``, which every
implementation must pass.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from server.presence.bus import NodeBus
from server.presence.names import Names
from server.presence.queues import Queues
from server.presence.ratings import Ratings
from server.presence.records import Records
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
    names: Names
    queues: Queues
    ratings: Ratings
    records: Records
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

    async def settled(self) -> None:
        """Wait until every change made so far is on disk (see :meth:`barrier`); for
        a reader that acts on what it reads somewhere the barrier does not hold."""
        barrier = self.barrier()
        if barrier is not None:
            await asyncio.shield(barrier)

    # -- lobby ------------------------------------------------------------------
    @abstractmethod
    async def lobby_upsert(self, room_id: str, summary: JSON) -> None:
        """Add or replace a room's lobby entry and publish ``{"op": "upsert", "room": summary}``."""

    @abstractmethod
    async def lobby_remove(self, room_id: str) -> None:
        """Drop the entry and publish ``{"op": "remove", "room_id": room_id}`` if it existed."""

    @abstractmethod
    async def lobby_list(self) -> list[JSON]:
        """Every lobby entry, ordered by room id."""

    @abstractmethod
    async def subscribe_lobby(self) -> Subscription: ...

    # -- room registry and ownership leases -------------------------------------------
    @abstractmethod
    async def put_room(self, room_id: str, meta: JSON) -> None:
        """The room's settings (game, seats, invite code...), readable by any node."""

    @abstractmethod
    async def get_room(self, room_id: str) -> JSON | None: ...

    @abstractmethod
    async def delete_room(self, room_id: str) -> None:
        """Forget the room: settings, lease and event log."""

    async def open_room(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        """A new room: take its lease and store its settings (``put_room``), in one round
        trip where the store allows it; False (nothing stored) if another node holds it."""
        if not await self.acquire_room(room_id, node_id, ttl):
            return False
        await self.put_room(room_id, meta)
        return True

    async def drop_closed_room(self, room_id: str, node_id: str) -> None:
        """A closed room: ``lobby_remove``, ``release_room`` and ``delete_room`` at once."""
        await self.lobby_remove(room_id)
        await self.release_room(room_id, node_id)
        await self.delete_room(room_id)

    @abstractmethod
    async def acquire_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        """Become the room's authority if nobody holds a live lease (or we already do)."""

    @abstractmethod
    async def renew_room(self, room_id: str, node_id: str, ttl: float) -> bool:
        """Extend our lease; False if it lapsed or another node holds it."""

    @abstractmethod
    async def release_room(self, room_id: str, node_id: str) -> bool:
        """Give up our lease; False if we did not hold it."""

    @abstractmethod
    async def room_owner(self, room_id: str) -> str | None: ...

    async def renew_rooms(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        """Extend our leases of several rooms; returns those we no longer hold.

        A node renews every room it owns at once: one round trip where the store
        allows it, so that a busy node's renewals cannot fall behind its leases.
        """
        return [r for r in room_ids if not await self.renew_room(r, node_id, ttl)]

    # -- room event log and fan-out -------------------------------------------------
    @abstractmethod
    async def append(
        self,
        room_id: str,
        logged: list[tuple[JSON, bytes]],
        first: int,
        owner: str | None = None,
        meta: JSON | None = None,
        lobby: JSON | None = None,
    ) -> int:
        """The one append, a compare-and-append: ``logged`` (each event, and its msgpack
        bytes or ``b""``) at seqs ``first``, ``first + 1``...; returns the last seq.

        The room's owner numbers its events (each holds its ``"seq"``) and packs each
        once (its binary frame, ``use_bin_type``): the store keeps and publishes those
        bytes as they are, packing in Python only an event given without them or with
        another seq. Seqs start at 1 and have no gaps. With ``owner`` the append happens
        only if that node holds the room's lease (see :meth:`acquire_room`), else
        :class:`LeaseLost`; only if ``first`` is the log's next seq, else
        :class:`SeqConflict`. With ``meta`` the room's settings and members are saved
        (``put_room``) with the events, with ``lobby`` (the room's summary after them)
        its lobby entry is set and published after them. All of it or none, in one
        atomic step (one round trip where the store allows it).
        """

    @abstractmethod
    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        """Events with ``seq > after_seq`` in order (at most ``limit``)."""

    @abstractmethod
    async def last_seq(self, room_id: str) -> int:
        """The seq of the room's newest event, 0 if none."""

    @abstractmethod
    async def subscribe_room(self, room_id: str) -> Subscription:
        """Every event appended to the room from now on, in seq order."""
