"""Several ``arena serve`` nodes, one arena: any node serves any client, no game is lost.

**Proxying, not redirecting.** A client stays on the node it connected to. Each
room has one authority, the node holding the room's lease in presence (its
*owner*). When a client on node B acts in a room owned by node A, B forwards the
request to A over A's node channel (Redis pub/sub), A runs it in the room's
actor, and A sends the room's replies and events for B's sessions back over B's
channel. Messages between two nodes go through one ordered outbox per
destination, so a session sees its room's events and replies in the same order
as it would on one node. (Redirecting would make a player in two rooms of two
nodes hold two connections, and every client re-route on failover.)

**Failover.** The owner renews its leases; a node that dies (even ``kill -9``)
stops renewing, so its leases lapse after ``lease_ttl``. Every node sweeps the
rooms its own clients are in (and, less often, the lobby); a room without an
owner is *taken over*: the node acquires the lease, reads the room's settings
and members and replays its event stream through :class:`engine.match.Match`
(:func:`restore_room`). After every takeover, even of a node's own room after a
failed append (which may have landed), the owner asks each node with members of
the room to re-attach them (``resume_member`` with the last seq that node
delivered), and a node's sweep does the same when it sees a room move, so they
receive exactly the events they missed. A node passes each room's events to its
connections once and in seq order: a duplicate is dropped, and a gap is filled
by asking the owner for a catch-up. Clients of the dead node
reconnect to any node and resume their session there. Seated players who never
come back within the grace period lose by abandonment.

**Requests in flight** are forwarded at most once: :mod:`server.cluster_calls`.

**Clocks during a takeover.** The clocks are restored to the values of the last
logged event; the clock of the player to move restarts from that value when the
new owner has restored the room. The time between the last logged event and
the takeover (the thinking time before the crash, plus the lease TTL and the
sweep) is not charged to anyone. Fischer move times are recovered exactly from
the logged clocks; with a fixed time per move the interrupted move gets a fresh
allowance.

**Fencing.** Only the node holding a room's lease can append to its log (the
append checks the lease in the same atomic step), so a node that was paused or
cut off past its lease cannot acknowledge anything: its append fails and its
copy is retired. A refusal from a room (``not_your_turn``...) first checks that
the log has not moved past the copy, so no stale copy answers for the room.

**Redis outages.** Every presence failure is answered ``unavailable``. A room
whose append failed (or whose lease renewal was refused, or that another node
took over) is *retired* on its node: its in-memory state can no longer be
trusted, so the next request for it restores it from the log, exactly as a
takeover does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from typing import Any

import structlog

from protocol.outgoing import Outgoing
from server import node_messages as nm
from server import room_calls as rc
from server import room_replay
from server.cluster_calls import ForwardedCalls, logged_requests
from server.cluster_catch_up import RemoteCatchUps
from server.cluster_inbox import NodeInbox
from server.cluster_remote import Outbound, Outbox, RemoteConn, RemoteRoom
from server.cluster_sweep import Sweeps
from server.host import Host
from server.presence import PresenceError
from server.room import Room, RoomSettings, room_meta
from server.sessions import Session
from server.tasks import stop

log = structlog.get_logger("arena.cluster")


def restore_room(
    arena: Host, meta: dict[str, Any], events: list[dict[str, Any]], now_ms: int
) -> tuple[Room, bool]:
    """A room as its log says it is (:func:`server.room_replay.restore`); True when its
    last game ended but was not finished (rated, recorded)."""
    settings = RoomSettings.from_dict(meta)
    state = room_replay.restore(settings, meta.get("members") or {}, events, now_ms)
    return Room(arena, settings, state=state), state.unfinished


class Cluster(ForwardedCalls, NodeInbox, Sweeps, RemoteCatchUps):
    """This node's part in a multi-node arena (active when presence is shared)."""

    def __init__(self, arena: Host) -> None:
        self.arena = arena
        self.presence: Any = arena.presence
        self.node = arena.node
        self.ttl = arena.config.lease_ttl
        #: session -> node holding its connection, for sessions in our rooms that are elsewhere
        self.routes: dict[str, str] = {}
        #: session -> player name of routed sessions
        self.names: dict[str, str] = {}
        #: (session, room) -> last seq this node delivered to that session's connection
        self.cursors: dict[tuple[str, str], int] = {}
        #: room -> the owner our local members are attached to
        self.remote: dict[str, str] = {}
        self._outboxes: dict[str, Outbox] = {}
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._tasks: list[asyncio.Task[Any]] = []
        self._locks: dict[str, asyncio.Lock] = {}
        self._attach_timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        #: (session, room) -> when this node last asked the owner to fill a gap
        self._refetched: dict[tuple[str, str], float] = {}
        self._subscribed = asyncio.Event()
        #: request ids of forwarded calls are unique across nodes and restarts
        self._boot = secrets.token_hex(4)
        #: room -> forwarded request id -> its outcome, for requests that changed the room
        self._requests: dict[str, dict[str, tuple[str, Any]]] = {}
        self._idle_routes: set[str] = set()

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        await self.presence.bus.heartbeat(self.node, self.ttl)
        self._tasks.append(asyncio.create_task(self._inbox_loop(), name="node-inbox"))
        self._tasks.append(asyncio.create_task(self._sweep_loop(), name="node-sweep"))
        try:
            async with asyncio.timeout(10):
                await self._subscribed.wait()
        except TimeoutError:
            raise PresenceError("cannot subscribe to this node's channel") from None

    async def stop(self) -> None:
        for handle in self._attach_timers.values():
            handle.cancel()
        # let queued messages out (replies, events of rooms stopped just now)
        deadline = time.monotonic() + 2.0
        while any(o.items for o in self._outboxes.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await stop(self._tasks + [o.task for o in self._outboxes.values()])
        with contextlib.suppress(PresenceError):
            await self.presence.bus.gone(self.node)

    # -- sending --------------------------------------------------------------------------
    def send(self, node: str, item: Outbound) -> None:
        """A message for ``node`` (a delivery: session and message), sent in order."""
        box = self._outboxes.get(node)
        if box is None:
            box = self._outboxes[node] = Outbox(self, node)
        box.put(item)

    def call_message(
        self, room_id: str, call: rc.RoomCall, rid: int | None = None, key: str = ""
    ) -> nm.Call:
        name = self.arena.session_name(call.session)
        return nm.Call(self.node, room_id, call, rid, key, name or None)

    def deliver(self, session: str, out: Outgoing) -> None:
        """A room of ours sends to a session connected elsewhere (if we know where)."""
        node = self.routes.get(session)
        if node is not None and node != self.node:
            self.send(node, (session, out))

    def note(self, session: str, out: Outgoing) -> None:
        """Remember the last seq of each room this node delivered to a local session."""
        w = out.wire
        room = w.get("room")
        if room is None:
            return
        seq = w.get("seq")
        if seq is None and out.type == "catch_up":
            events = w.get("events") or []
            seq = events[-1]["seq"] if events else None
        if seq is not None:
            key = (session, room)
            if seq > self.cursors.get(key, 0):
                self.cursors[key] = seq

    @property
    def owner(self) -> str:
        """The room log's fencing owner: this node (its appends check its lease)."""
        return self.node

    def name_of(self, session: str) -> str | None:
        return self.names.get(session)

    def adopts_sessions(self) -> bool:
        return True

    async def find_invite(self, invite: str) -> str | None:
        return await self.presence.rooms.find_invite(invite)

    def members_meta(self, room: Room) -> dict[str, Any]:
        return room_meta(room, self.node)

    def forget(self, session: str, room_id: str) -> None:
        """A room of ours dropped a member connected elsewhere: tell its node."""
        node = self.routes.get(session)
        if node is not None and node != self.node:
            self.send(node, nm.Forget(session, room_id))

    async def find_room(self, room_id: str) -> Room | RemoteRoom | None:
        """The room, wherever it is; taken over here if nobody owns it any more."""
        local = self.arena.rooms.get(room_id)
        if local is not None and not local.closed:
            return local
        meta = await self.presence.rooms.get(room_id)
        if meta is None:
            return None
        owner = await self.presence.leases.owner(room_id)
        if owner is None or owner == self.node:
            room = await self.take_over(room_id)
            if room is not None:
                return room
            if await self.presence.rooms.get(room_id) is None:
                return None  # it closed meanwhile: its settings went with its log
            owner = await self.presence.leases.owner(room_id)
            if owner is None or owner == self.node:
                raise PresenceError(f"room {room_id} is being taken over")
        if self.remote.get(room_id) != owner:  # new to us, or moved: our members follow it
            self._attach(room_id, owner)
        members = {sid: v["role"] for sid, v in (meta.get("members") or {}).items()}
        return RemoteRoom(self, room_id, owner, RoomSettings.from_dict(meta), members)

    async def remote_session(self, sid: str) -> Any:
        """A session connected to another live node, as a stand-in this node's matchmaker
        can seat (its messages go through that node, which keeps its queue); None if it
        is gone."""
        data = await self.presence.sessions.get(sid)
        node = (data or {}).get("node")
        if not data or not data.get("player") or not node or node == self.node:
            return None
        if not (await self.presence.bus.alive([node])).get(node):
            return None
        s = Session(sid, "", node)
        s.player = data["player"]
        s.rooms = set(data.get("rooms") or [])
        s.conn = RemoteConn(self, node, sid)  # type: ignore[assignment]
        self.routes[sid] = node
        self.names[sid] = s.player["name"]
        return s

    def cached_room(self, room_id: str) -> RemoteRoom | None:
        """A stand-in for posting to a room owned elsewhere (no presence round trip)."""
        owner = self.remote.get(room_id)
        return None if owner is None else RemoteRoom(self, room_id, owner)

    # -- takeover ---------------------------------------------------------------------------------
    async def take_over(self, room_id: str, quiet: bool = False) -> Room | None:
        """Become the room's authority if its lease is free: restore it from its log.

        Never while this node shuts down: a request forwarded between the release of its
        leases and the end would take a room back, to hold it until the lease lapsed.
        ``quiet``: not logged room by room (a restart restores them all, server.restore)."""
        if self.arena.stopping:
            return None
        lock = self._locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            existing = self.arena.rooms.get(room_id)
            if existing is not None and not existing.closed:
                return existing
            t0 = time.monotonic()
            if not await self.presence.leases.acquire(room_id, self.node, self.ttl):
                return None
            meta = await self.presence.rooms.get(room_id)
            events = await self.presence.rooms.read_events(room_id) if meta is not None else []
            if meta is None or (events and events[-1]["type"] == "room_closed"):
                await self._forget_dead_room(room_id)
                return None
            arena = self.arena
            now_ms = int(asyncio.get_running_loop().time() * 1000)
            room, unfinished = restore_room(arena, meta, events, now_ms)
            self._requests[room_id] = logged_requests(events)
            room.start()
            arena.rooms[room_id] = room
            if room.settings.invite:
                arena.invites[room.settings.invite] = room_id
            arena.metrics.rooms.set(len(arena.rooms))
            if room.playing:
                arena.metrics.games_live.inc()
            previous = self.remote.pop(room_id, None) or meta.get("node")
            for sid in list(room.members):
                s = arena.sessions.get(sid)
                cursor = self.cursors.get((sid, room_id))
                if s is not None and s.conn is not None and cursor is not None:
                    room.tell(rc.ResumeMember(sid, cursor))
                elif s is None and sid not in self.routes and room.seat_of(sid) is not None:
                    self._await_attach(room, sid)
            arena.spawn(self._call_members_back(room))
            if unfinished:
                room.post(room.finish_unfinished)
            room.arm_deadline()
            room.post(room.update_lobby)
            took = time.monotonic() - t0
            arena.metrics.takeovers.inc()
            arena.metrics.takeover_seconds.observe(took)
            (room.log.debug if quiet else room.log.info)(
                "room_taken_over",
                previous_node=previous,
                seq=room.seq,
                events=len(events),
                restore_ms=round(took * 1000, 1),
            )
            return room

    def _await_attach(self, room: Room, session: str) -> None:
        """A seated member connected elsewhere must reappear within the grace period."""
        key = (room.id, session)
        if key in self._attach_timers:
            return

        def expire() -> None:
            self._attach_timers.pop(key, None)
            live = self.arena.rooms.get(room.id)
            if live is room and not room.closed and session in room.members:
                room.tell(rc.SessionGone(session))

        loop = asyncio.get_running_loop()
        self._attach_timers[key] = loop.call_later(self.arena.config.grace, expire)

    async def _forget_dead_room(self, room_id: str) -> None:
        with contextlib.suppress(PresenceError):
            await self.presence.leases.release(room_id, self.node)
            await self.presence.lobby.remove(room_id)
        self.remote.pop(room_id, None)
        for s in self.arena.sessions.values():
            if room_id in s.rooms:
                s.rooms.discard(room_id)

    async def check_refusal(self, room: Room, exc: Exception) -> Exception:
        """A refusal (``not_your_turn``...) is only as good as the copy it came from: if
        the log moved past our copy (another node owned the room meanwhile), the answer
        is ``unavailable`` and the copy is retired, so the retry meets the room as logged."""
        try:
            last = await self.presence.rooms.last_seq(room.id)
        except PresenceError:
            return exc
        if last <= room.seq:
            return exc
        room.log.warning("room_copy_stale", seq=room.seq, logged=last)
        return PresenceError(f"room {room.id} had moved on: retry")

    def retire(self, room: Room) -> None:
        """Our copy of the room can no longer be trusted (an append failed, the lease went):
        stop it; the next request restores it from the log, here or on the new owner."""
        if self.arena.rooms.get(room.id) is room:
            del self.arena.rooms[room.id]
            self.arena.metrics.rooms.set(len(self.arena.rooms))
            if room.playing:
                self.arena.metrics.games_live.dec()
        room.halt()
        room.log.warning("room_retired")
