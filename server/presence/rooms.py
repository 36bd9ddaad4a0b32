"""The rooms port of presence: each room's settings (game, seats, invite code, members)
and its event log, with the one append. A room's state is a fold over its log
(server.room_replay), so the log is what a takeover or a restart restores from. In
memory (:class:`MemoryRooms`), written through to SQLite
(:class:`server.presence.sqlite_rooms.SqliteRooms`), or in Redis
(:mod:`server.presence.redis_rooms`).

The append is fenced by the room's lease and may set the room's lobby entry in the same
atomic step, so this port works with the store's :mod:`~server.presence.leases` and
:mod:`~server.presence.lobby` (Redis writes all three in one script)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict

import msgpack

from server.presence.leases import MemoryLeases
from server.presence.lobby import MemoryLobby
from server.presence.values import JSON, LeaseLost, SeqConflict, copy_json

#: one packer, reused: ``msgpack.packb`` builds a new one (and its buffer) for every call
_pack = msgpack.Packer(use_bin_type=True).pack


class Rooms(ABC):
    """Room settings and event logs: ``presence.rooms``."""

    @abstractmethod
    async def put(self, room_id: str, meta: JSON) -> None:
        """The room's settings (game, seats, invite code...), readable by any node."""

    @abstractmethod
    async def get(self, room_id: str) -> JSON | None: ...

    @abstractmethod
    async def find_invite(self, code: str) -> str | None:
        """The room a private room's invite code opens (any node's)."""

    @abstractmethod
    async def open(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        """A new room: take its lease and store its settings (:meth:`put`) in one step;
        False (nothing stored) if another node holds the lease."""

    @abstractmethod
    async def drop_closed(self, room_id: str) -> None:
        """A closed room: its lobby entry (published if it was there), its lease
        (whoever holds it), settings and log go, in one step."""

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
        once (its binary frame, ``use_bin_type``): the store keeps those bytes as they
        are, packing in Python only an event given without them or with another seq.
        Seqs start at 1 and have no gaps. With ``owner`` the append happens only if that
        node holds the room's lease, else :class:`LeaseLost`; only if ``first`` is the
        log's next seq, else :class:`SeqConflict`. With ``meta`` the room's settings and
        members are saved (:meth:`put`) with the events, with ``lobby`` (the room's
        summary after them) its lobby entry is set and published after them. All of it
        or none, in one atomic step (one round trip where the store allows it); done
        (durably, as far as the store goes) before it returns, so a room tells nobody of
        a move the log does not hold.
        """

    @abstractmethod
    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        """Events with ``seq > after_seq`` in order (at most ``limit``)."""

    @abstractmethod
    async def last_seq(self, room_id: str) -> int:
        """The seq of the room's newest event, 0 if none."""


class MemoryRooms(Rooms):
    """Settings copied in and out; events kept packed (msgpack: a copy for free, cheaper
    than deepcopy or JSON), unpacked only when read."""

    def __init__(self, leases: MemoryLeases, lobby: MemoryLobby) -> None:
        self.leases = leases
        self.lobby = lobby
        self.settings: dict[str, JSON] = {}
        #: room id -> its packed events; index = seq - 1
        self.events: dict[str, list[bytes]] = defaultdict(list)

    async def put(self, room_id: str, meta: JSON) -> None:
        self.settings[room_id] = copy_json(meta)

    async def get(self, room_id: str) -> JSON | None:
        return copy_json(self.settings.get(room_id))

    async def find_invite(self, code: str) -> str | None:
        for room_id, meta in self.settings.items():
            if meta.get("invite") == code:
                return room_id
        return None

    async def open(self, room_id: str, node_id: str, ttl: float, meta: JSON) -> bool:
        if not await self.leases.acquire(room_id, node_id, ttl):
            return False
        await self.put(room_id, meta)
        return True

    async def drop_closed(self, room_id: str) -> None:
        await self.lobby.remove(room_id)
        self.leases.held.pop(room_id, None)
        self.settings.pop(room_id, None)
        self.events.pop(room_id, None)

    async def append(
        self,
        room_id: str,
        logged: list[tuple[JSON, bytes]],
        first: int,
        owner: str | None = None,
        meta: JSON | None = None,
        lobby: JSON | None = None,
    ) -> int:
        if owner is not None and self.leases.holder(room_id) != owner:
            raise LeaseLost(f"room {room_id}: {owner} does not hold its lease")
        log = self.events[room_id]
        if len(log) + 1 != first:
            raise SeqConflict(room_id, len(log) + 1, first)
        if meta is not None:
            await self.put(room_id, meta)
        seq = first - 1
        for seq, (event, packed) in enumerate(logged, first):
            if not packed or event.get("seq") != seq:  # no bytes, or bytes of another seq
                packed = _pack({**event, "seq": seq})
            log.append(packed)
            self._logged(room_id, seq, packed)
        if lobby is not None:
            await self.lobby.upsert(room_id, lobby)
        return seq

    def _logged(self, room_id: str, seq: int, packed: bytes) -> None:
        """Event ``seq`` was added to the room's log (a durable store writes it)."""

    async def read_events(
        self, room_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[JSON]:
        log = self.events.get(room_id, [])
        chosen = log[max(after_seq, 0) :]
        if limit is not None:
            chosen = chosen[:limit]
        return [msgpack.unpackb(packed, raw=False) for packed in chosen]

    async def last_seq(self, room_id: str) -> int:
        return len(self.events.get(room_id, []))
