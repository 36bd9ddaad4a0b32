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

**Requests in flight.** A forwarded request carries an id (node, boot, counter);
when the owner changes while it waits, it is sent again to the new owner under
the same id. The owner logs the id with the events the request caused (the
``request`` field of the log entries, which clients never see), so a request
that already took effect is answered its first outcome instead of running twice
(:data:`ONCE_CALLS`; joins and reads are harmless to repeat).

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
import json
import secrets
import time
from collections import deque
from typing import Any

import structlog

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import ROOM_EVENT_TYPES
from server import room_state
from server.host import Host
from server.outgoing import Outgoing
from server.presence import PresenceError
from server.room import Room, RoomSettings, room_meta
from server.sessions import Session
from server.tasks import checkpoint, stop

log = structlog.get_logger("arena.cluster")

#: room methods another node may ask the owner to run (the first argument is a session id)
ROOM_CALLS = frozenset(
    {
        "join",
        "watch",
        "leave",
        "take_seat",
        "leave_seat",
        "set_ready",
        "move",
        "resign",
        "abort",
        "offer_rematch",
        "chat",
        "send_state",
        "resume_member",
        "disconnected",
        "session_gone",
        "catch_up",
    }
)
#: room methods whose forwarded requests run at most once (a retry gets the first outcome)
ONCE_CALLS = frozenset(
    {
        "move",
        "resign",
        "abort",
        "chat",
        "set_ready",
        "take_seat",
        "leave_seat",
        "leave",
        "offer_rematch",
    }
)
#: forwarded requests a room's owner remembers the outcome of, per room
REQUESTS_KEPT = 1000
#: seconds a forwarded request waits for the owner's answer
CALL_TIMEOUT = 5.0
#: messages queued for one node before the oldest are dropped (that node then resyncs)
OUTBOX_LIMIT = 50_000


class _Moved(Exception):
    """The node asked no longer hosts the room (taken over meanwhile): look it up again."""


def restore_room(
    arena: Host, meta: dict[str, Any], events: list[dict[str, Any]], now_ms: int
) -> tuple[Room, bool]:
    """A room as its log says it is (:func:`server.room_state.restore`); True when its
    last game ended but was not finished (rated, recorded)."""
    settings = RoomSettings.from_dict(meta)
    state = room_state.restore(settings, meta.get("members") or {}, events, now_ms)
    return Room(arena, settings, state=state), state.unfinished


def logged_requests(events: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """The forwarded requests the log's last events were caused by (their ``request``
    ids), each with the types of the events it caused."""
    found: dict[str, set[str]] = {}
    for ev in events[-REQUESTS_KEPT:]:
        key = ev.get("request")
        if key:
            found.setdefault(key, set()).add(ev["type"])
    return {key: ("logged", types) for key, types in found.items()}


# -- a room on another node ---------------------------------------------------------------


class RemoteMethod:
    """Stands for a room method when the room lives on another node (only its name travels)."""

    __slots__ = ("__name__",)

    def __init__(self, name: str) -> None:
        self.__name__ = name


class RemoteRoom:
    """What this node knows of a room owned elsewhere: enough to forward requests to it."""

    def __init__(
        self,
        cluster: Cluster,
        room_id: str,
        owner: str,
        settings: RoomSettings | None = None,
        members: dict[str, str] | None = None,
    ) -> None:
        self.cluster = cluster
        self.id = room_id
        self.owner = owner
        self.settings = settings
        self.members = members or {}
        self.closed = False

    def __getattr__(self, name: str) -> RemoteMethod:
        if name in ROOM_CALLS:
            return RemoteMethod(name)
        raise AttributeError(name)

    async def ask(self, fn: RemoteMethod, *args: Any) -> Any:
        return await self.cluster.call_room(self, fn.__name__, list(args))

    def post(self, fn: RemoteMethod, *args: Any) -> None:
        self.cluster.send(self.owner, self.cluster.call_message(self.id, fn.__name__, list(args)))


class RemoteConn:
    """The connection of a session on another node: what is sent goes through that node."""

    def __init__(self, cluster: Cluster, node: str, session: str) -> None:
        self.cluster = cluster
        self.node = node
        self.session = session

    def send(self, msg: Any) -> None:
        out = msg if isinstance(msg, Outgoing) else Outgoing.of(msg)
        self.cluster.send(self.node, (self.session, out))


# -- node-to-node messages ---------------------------------------------------------------


class Outbox:
    """Messages for one node, published in order by one task, batched per round trip."""

    def __init__(self, cluster: Cluster, node: str) -> None:
        self.cluster = cluster
        self.node = node
        self.items: deque[Any] = deque()
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"outbox-{node}")

    def put(self, item: Any) -> None:
        if len(self.items) >= OUTBOX_LIMIT:
            log.warning("outbox_overflow", to=self.node, dropped=len(self.items))
            self.items.clear()
            self.items.append({"k": "resync", "from": self.cluster.node})
        self.items.append(item)
        self.wake.set()

    def _batch(self) -> list[str]:
        texts: list[str] = []
        while self.items and len(texts) < 256:
            item = self.items.popleft()
            if isinstance(item, tuple):  # a delivery: merge the sessions of one message
                out, sessions = item[1], [item[0]]
                while self.items and isinstance(self.items[0], tuple) and self.items[0][1] is out:
                    sessions.append(self.items.popleft()[0])
                item = {"k": "d", "s": sessions, "m": out.wire}
            texts.append(json.dumps(item, separators=(",", ":")))
        return texts

    async def _run(self) -> None:
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            await self.wake.wait()
            self.wake.clear()
            while self.items:
                texts = self._batch()
                while True:
                    try:
                        await self.cluster.presence.publish_node(self.node, texts)
                        break
                    except PresenceError:  # Redis is down: keep the order, try again
                        await asyncio.sleep(0.25)


class Cluster:
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
        self.takeovers: list[dict[str, Any]] = []

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        await self.presence.node_heartbeat(self.node, self.ttl)
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
            await self.presence.node_gone(self.node)

    # -- sending --------------------------------------------------------------------------
    def send(self, node: str, item: Any) -> None:
        box = self._outboxes.get(node)
        if box is None:
            box = self._outboxes[node] = Outbox(self, node)
        box.put(item)

    def call_message(
        self, room_id: str, fn: str, args: list[Any], rid: int | None = None, key: str = ""
    ):
        msg: dict[str, Any] = {"k": "c", "from": self.node, "room": room_id, "fn": fn, "a": args}
        if rid is not None:
            msg["id"] = rid
        if key:
            msg["q"] = key
        if args and isinstance(args[0], str):
            name = self.arena.session_name(args[0])
            if name:
                msg["n"] = name
        return msg

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
        return await self.presence.find_invite(invite)

    def members_meta(self, room: Room) -> dict[str, Any]:
        return room_meta(room, self.node)

    def forget(self, session: str, room_id: str) -> None:
        """A room of ours dropped a member connected elsewhere: tell its node."""
        node = self.routes.get(session)
        if node is not None and node != self.node:
            self.send(node, {"k": "forget", "s": session, "room": room_id})

    # -- forwarded requests -------------------------------------------------------------------
    async def call_room(
        self, room: RemoteRoom, fn: str, args: list[Any], retry: bool = True, key: str = ""
    ):
        """Run a room method on the room's owner. If the owner changes meanwhile the request
        is sent again to the new one, under the same ``key``: the owner logs the key with
        the events the request caused, so a request that was run already is not run again
        (its first outcome is the answer)."""
        rid = next(self._ids)
        key = key or f"{self.node}.{self._boot}.{rid}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self.send(room.owner, self.call_message(room.id, fn, args, rid, key))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CALL_TIMEOUT
        try:
            while True:  # waiting, look now and then whether the room changed hands
                left = deadline - loop.time()
                if left <= 0:
                    raise PresenceError(f"node {room.owner} did not answer for room {room.id}")
                try:
                    async with asyncio.timeout(min(left, 0.25)):
                        return await asyncio.shield(fut)
                except TimeoutError:
                    if await self.presence.room_owner(room.id) != room.owner:
                        raise _Moved() from None
        except _Moved:
            if not retry:
                raise ProtocolError(ErrorCode.UNAVAILABLE, "the room is moving") from None
            log.info("request_retried", room=room.id, fn=fn, previous_node=room.owner)
            target = await self.find_room(room.id)
            if target is None:
                raise ProtocolError(ErrorCode.UNKNOWN_ROOM, f"no room {room.id}") from None
            if isinstance(target, RemoteRoom):
                return await self.call_room(target, fn, args, retry=False, key=key)
            return await target.ask(self._once(target, fn, key), *args)
        finally:
            self._pending.pop(rid, None)

    def _serve_call(self, msg: dict[str, Any]) -> None:
        origin, rid, room_id = msg["from"], msg.get("id"), msg["room"]
        fn, args = msg["fn"], msg["a"]
        if fn not in ROOM_CALLS:
            if rid is not None:
                err = {"code": str(ErrorCode.BAD_REQUEST), "message": fn}
                self.send(origin, {"k": "r", "id": rid, "e": err})
            return
        room = self.arena.rooms.get(room_id)
        if room is None or room.closed:  # retired here, or never ours: restore if the lease is
            self.arena.spawn(self._serve_after_takeover(msg))
            return
        self._run_call(room, origin, rid, fn, args, msg.get("n"), msg.get("q"))

    async def _serve_after_takeover(self, msg: dict[str, Any]) -> None:
        origin, rid, room_id = msg["from"], msg.get("id"), msg["room"]
        room = None
        with contextlib.suppress(PresenceError):
            if await self.presence.room_owner(room_id) in (None, self.node):
                room = await self.take_over(room_id)
        if room is None:
            if rid is not None:
                self.send(origin, {"k": "r", "id": rid, "e": {"code": "moved", "message": ""}})
            return
        self._run_call(room, origin, rid, msg["fn"], msg["a"], msg.get("n"), msg.get("q"))

    def _run_call(
        self,
        room: Room,
        origin: str,
        rid: int | None,
        fn: str,
        args: list[Any],
        name: Any,
        key: str | None = None,
    ) -> None:
        method = self._once(room, fn, key)
        session = args[0] if args and isinstance(args[0], str) else None

        async def routed(*a: Any) -> Any:
            # inside the actor: events before this point went to the old route, the ones
            # after it (and this call's catch-up or replies) go to the new one, in order
            if session is not None:
                self.routes[session] = origin
                if name:
                    self.names[session] = name
                timer = self._attach_timers.pop((room.id, session), None)
                if timer is not None:
                    timer.cancel()
            return await method(*a)

        routed.__name__ = fn
        if rid is None:
            room.post(routed, *args)
            return
        task = asyncio.ensure_future(room.ask(routed, *args))
        task.add_done_callback(lambda t: self._reply(origin, rid, t))

    def _once(self, room: Room, fn: str, key: str | None) -> Any:
        """``room``'s method ``fn``, run at most once for request ``key`` (in the actor):
        the events it causes are logged with the key, and a request whose key the room
        knows (from its log, or from this node's run of it) gets the first outcome."""
        method = getattr(room, fn)
        if not key or fn not in ONCE_CALLS:
            return method

        async def once(*a: Any) -> Any:
            done = self._requests.get(room.id, {}).get(key)
            if done is not None:
                log.info("request_repeated", room=room.id, fn=fn)
                return self._outcome(fn, list(a), done)
            before = room.seq
            room.request = key
            try:
                result = await method(*a)
            except Exception as exc:
                if room.seq > before:
                    self._remember(room.id, key, ("error", exc))
                raise
            finally:
                room.request = None
            if room.seq > before:
                self._remember(room.id, key, ("ok", result))
            return result

        once.__name__ = fn
        return once

    def _remember(self, room_id: str, key: str, outcome: tuple[str, Any]) -> None:
        done = self._requests.setdefault(room_id, {})
        done[key] = outcome
        if len(done) > REQUESTS_KEPT:
            del done[next(iter(done))]

    def _outcome(self, fn: str, args: list[Any], done: tuple[str, Any]) -> Any:
        """What a repeated request is answered: what it was answered the first time."""
        kind, value = done
        if kind == "error":
            raise value
        if kind == "logged" and fn == "move" and "move_made" not in value:
            # the flag fell before the move arrived (as Room.move answers it)
            raise ProtocolError(ErrorCode.GAME_OVER, "your time ran out before the move arrived")
        if fn == "move" and len(args) > 2 and args[2] is not None:
            # asked for its move_made as the reply: that went out the first time (or was
            # lost with its node, and the catch-up brings it): an ack answers instead
            self.arena.deliver(args[0], Outgoing({"type": "ack", "re": args[2]}))
        return value if kind == "ok" else None

    def _reply(self, origin: str, rid: int, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            err: dict[str, Any] = {"code": "unavailable", "message": "cancelled"}
            self.send(origin, {"k": "r", "id": rid, "e": err})
            return
        exc = task.exception()
        if exc is None:
            self.send(origin, {"k": "r", "id": rid, "ok": task.result()})
            return
        code = getattr(exc, "code", None)
        if not isinstance(code, str) or code not in ErrorCode._value2member_map_:
            log.error("forwarded_call_failed", error=repr(exc))
            code = str(ErrorCode.INTERNAL)
        err = {"code": str(code), "message": getattr(exc, "message", None) or str(exc)}
        if getattr(exc, "retry_after", None) is not None:
            err["retry_after"] = exc.retry_after  # type: ignore[attr-defined]
        self.send(origin, {"k": "r", "id": rid, "e": err})

    def _on_reply(self, msg: dict[str, Any]) -> None:
        fut = self._pending.pop(msg["id"], None)
        if fut is None or fut.done():
            return
        if "e" in msg:
            e = msg["e"]
            if e["code"] == "moved":
                fut.set_exception(_Moved())
            else:
                fut.set_exception(
                    ProtocolError(e["code"], e.get("message", ""), retry_after=e.get("retry_after"))
                )
        else:
            fut.set_result(msg.get("ok"))

    # -- the node's inbox -------------------------------------------------------------------
    async def _inbox_loop(self) -> None:
        first = True
        while True:
            checkpoint()
            try:
                sub = await self.presence.subscribe_node(self.node)
            except PresenceError:
                await asyncio.sleep(0.25)
                continue
            if not first:  # messages may have been missed meanwhile: catch up every member
                self._attach_all()
                # and the nodes whose members are in our rooms re-attach theirs
                peers = set(self.routes.values()) | set(self.remote.values())
                for node in peers - {self.node}:
                    self.send(node, {"k": "resync", "from": self.node})
            first = False
            self._subscribed.set()
            async with sub:
                async for msg in sub:
                    try:
                        self._handle(msg)
                    except Exception:
                        log.exception("node_message_failed", kind=msg.get("k"))
            self._subscribed.clear()
            log.warning("node_inbox_lost")

    def _handle(self, msg: dict[str, Any]) -> None:
        k = msg["k"]
        arena = self.arena
        if k == "d":
            out = Outgoing(msg["m"])
            for sid in msg["s"]:
                s = arena.sessions.get(sid)
                if s is not None and s.conn is not None and not arena.held(s, out):
                    admitted = self._admit(sid, out)
                    if admitted is not None:
                        s.conn.send(admitted)
                        self.note(sid, admitted)
        elif k == "c":
            self._serve_call(msg)
        elif k == "r":
            self._on_reply(msg)
        elif k == "forget":
            self.cursors.pop((msg["s"], msg["room"]), None)
            s = arena.sessions.get(msg["s"])
            if s is not None and msg["room"] in s.rooms:
                s.rooms.discard(msg["room"])
                arena.spawn(arena.session_service.save(s))
        elif k == "drop":
            arena.session_service.drop(msg["s"])
        elif k == "rooms":  # another node's matchmaker put our session in a room
            s = arena.sessions.get(msg["s"])
            if s is not None:
                s.rooms |= set(msg["rooms"])
                s.queue = None
                arena.spawn(arena.session_service.save(s))
        elif k == "resync":
            self._attach_all()
        elif k == "attach":  # the room's owner took it (back) over: our members follow it
            arena.spawn(self._reattach(msg["room"], msg["from"]))

    def _admit(self, sid: str, out: Outgoing) -> Outgoing | None:
        """What of a message from a room's owner the session's connection gets: each room
        event once and in seq order, whatever the owners did (a takeover re-sends what a
        node may have missed; an old owner's messages may still be on their way).

        A duplicate is dropped, or becomes an ``ack`` when it is also a reply (a client
        takes whichever reply carries its ``re``). After a gap the event is dropped too
        and the owner asked for a catch-up from the cursor, which brings it in order.
        """
        w = out.wire
        room = w.get("room")
        cursor = None if room is None else self.cursors.get((sid, room))
        if cursor is None:
            return out
        if out.type == "catch_up":
            events = w.get("events") or []
            kept = [e for e in events if e["seq"] > cursor]
            if len(kept) == len(events):
                return out
            if not kept and "re" not in w:
                return None
            return Outgoing({**w, "events": kept})
        if out.type not in ROOM_EVENT_TYPES:
            return out
        seq = w["seq"]
        if seq == cursor + 1:
            return out
        if seq > cursor + 1:
            self._refetch(sid, room, cursor)
        return None if "re" not in w else Outgoing({"type": "ack", "re": w["re"]})

    def _refetch(self, sid: str, room_id: str, cursor: int) -> None:
        """Ask the room's owner for the events after ``cursor`` (at most once a second)."""
        owner = self.remote.get(room_id)
        now = asyncio.get_running_loop().time()
        key = (sid, room_id)
        if owner is None or owner == self.node or now - self._refetched.get(key, -9.0) < 1.0:
            return
        self._refetched[key] = now
        self.send(owner, self.call_message(room_id, "catch_up", [sid, cursor, None]))

    def resumed(self, sid: str, seen: dict[str, int]) -> None:
        """A session resumed on this node: its cursors are what its new connection has seen."""
        for key in [k for k in self.cursors if k[0] == sid]:
            del self.cursors[key]
        for room_id, seq in seen.items():
            self.cursors[(sid, room_id)] = seq

    async def _reattach(self, room_id: str, owner: str) -> None:
        """``owner`` has (re)taken the room over: our members catch up from it, whether or
        not the owner changed (a node that takes its own room back after a failed append
        may have logged events it never sent)."""
        try:
            if await self.presence.room_owner(room_id) != owner:
                return  # it moved on again: the sweep follows it
        except PresenceError:
            return  # the sweep follows it when the store is back
        local = self.arena.rooms.get(room_id)
        if local is not None:  # our copy outlived our lease: stale
            self.retire(local)
        self._attach(room_id, owner)

    async def _call_members_back(self, room: Room) -> None:
        """After a takeover: every node with members of the room re-attaches them."""
        nodes = set()
        for sid in list(room.members):
            s = self.arena.sessions.get(sid)
            if s is not None and s.conn is not None:
                continue  # ours: caught up by the takeover itself
            node = self.routes.get(sid)
            if node is None:
                with contextlib.suppress(PresenceError):
                    node = ((await self.presence.get_session(sid)) or {}).get("node")
            if node and node != self.node:
                nodes.add(node)
        for node in sorted(nodes):
            self.send(node, {"k": "attach", "room": room.id, "from": self.node})

    # -- members of rooms owned elsewhere ------------------------------------------------------
    def _local_members(self, room_id: str) -> list[str]:
        return [
            s.id for s in self.arena.sessions.values() if s.conn is not None and room_id in s.rooms
        ]

    def _attach(self, room_id: str, owner: str) -> None:
        """Tell the room's owner where our members are and what they have seen."""
        self.remote[room_id] = owner
        for sid in self._local_members(room_id):
            cursor = self.cursors.get((sid, room_id))
            if cursor is None:  # nothing sent here yet: it is resuming, with its own cursor
                continue
            self.send(owner, self.call_message(room_id, "resume_member", [sid, cursor]))

    def _attach_all(self) -> None:
        for room_id, owner in list(self.remote.items()):
            if room_id not in self.arena.rooms:
                self._attach(room_id, owner)

    async def find_room(self, room_id: str) -> Room | RemoteRoom | None:
        """The room, wherever it is; taken over here if nobody owns it any more."""
        local = self.arena.rooms.get(room_id)
        if local is not None and not local.closed:
            return local
        meta = await self.presence.get_room(room_id)
        if meta is None:
            return None
        owner = await self.presence.room_owner(room_id)
        if owner is None or owner == self.node:
            room = await self.take_over(room_id)
            if room is not None:
                return room
            owner = await self.presence.room_owner(room_id)
            if owner is None or owner == self.node:
                raise PresenceError(f"room {room_id} is being taken over")
        if self.remote.get(room_id) != owner:  # new to us, or moved: our members follow it
            self._attach(room_id, owner)
        members = {sid: v["role"] for sid, v in (meta.get("members") or {}).items()}
        return RemoteRoom(self, room_id, owner, RoomSettings.from_dict(meta), members)

    async def remote_session(self, sid: str, partner: Any = None) -> Any:
        """A session connected to another live node, as a stand-in this node's matchmaker
        can seat (its messages go through that node); None if it is gone."""
        data = await self.presence.get_session(sid)
        node = (data or {}).get("node")
        if not data or not data.get("player") or not node or node == self.node:
            return None
        if not (await self.presence.nodes_alive([node])).get(node):
            return None
        s = Session(sid, "", node)
        s.player = data["player"]
        s.rooms = set(data.get("rooms") or [])
        s.queue = getattr(partner, "queue", None)
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
            if not await self.presence.acquire_room(room_id, self.node, self.ttl):
                return None
            meta = await self.presence.get_room(room_id)
            events = await self.presence.read_events(room_id) if meta is not None else []
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
                    room.post(room.resume_member, sid, cursor)
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
            self.takeovers.append({"room": room_id, "from": previous, "seq": room.seq})
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
                room.post(room.session_gone, session)

        loop = asyncio.get_running_loop()
        self._attach_timers[key] = loop.call_later(self.arena.config.grace, expire)

    async def _forget_dead_room(self, room_id: str) -> None:
        with contextlib.suppress(PresenceError):
            await self.presence.release_room(room_id, self.node)
            await self.presence.lobby_remove(room_id)
        self.remote.pop(room_id, None)
        for s in self.arena.sessions.values():
            if room_id in s.rooms:
                s.rooms.discard(room_id)

    async def check_refusal(self, room: Room, exc: Exception) -> Exception:
        """A refusal (``not_your_turn``...) is only as good as the copy it came from: if
        the log moved past our copy (another node owned the room meanwhile), the answer
        is ``unavailable`` and the copy is retired, so the retry meets the room as logged."""
        try:
            last = await self.presence.last_seq(room.id)
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

    # -- sweeps ------------------------------------------------------------------------------------
    async def _sweep_loop(self) -> None:
        n = 0
        down = False  # the store is out: said once per outage, not every round
        while True:
            checkpoint()  # (a cancellation lost in redis-py: server.tasks)
            await asyncio.sleep(self.ttl / 3)
            n += 1
            try:
                await self.sweep(lobby=n % 3 == 0)
            except PresenceError as exc:
                if not down:
                    log.warning("sweep_failed", error=str(exc))
                down = True
            except Exception:
                log.exception("sweep_failed")
            else:
                if down:
                    log.info("sweep_recovered")
                down = False

    async def sweep(self, lobby: bool = False) -> None:
        """Heartbeat; take over ownerless rooms; re-attach members whose room moved."""
        await self.presence.node_heartbeat(self.node, self.ttl)
        interest = {
            r
            for s in self.arena.sessions.values()
            if s.conn is not None
            for r in s.rooms
            if r not in self.arena.rooms
        }
        if lobby:
            for entry in await self.presence.lobby_list():
                rid = entry.get("room")
                if rid and rid not in self.arena.rooms:
                    interest.add(rid)
        await self._check_member_nodes()
        if lobby:
            self._prune(interest)
        owners = await self.presence.room_owners(sorted(interest))
        for room_id, owner in owners.items():
            if owner is None or owner == self.node:  # ownerless, or ours but retired here
                self.arena.spawn(self._try_take_over(room_id))
            elif self.remote.get(room_id) != owner:  # moved, or was ours until it lapsed
                log.info("room_moved", room=room_id, owner=owner)
                self._attach(room_id, owner)

    def _prune(self, interest: set[str]) -> None:
        """Forget routes, cursors and locks nobody needs any more (bounded memory)."""
        arena = self.arena
        members = {sid for room in arena.rooms.values() for sid in room.members}
        idle = {sid for sid in self.routes if sid not in members}
        for sid in idle & self._idle_routes:  # idle twice in a row: not just being seated
            del self.routes[sid]
            self.names.pop(sid, None)
        self._idle_routes = idle - self._idle_routes
        for key in [k for k in self.cursors if k[0] not in arena.sessions]:
            del self.cursors[key]
        self._refetched = {k: t for k, t in self._refetched.items() if k in self.cursors}
        for room_id in [r for r in self.remote if r not in interest]:
            del self.remote[room_id]
        for room_id, lock in list(self._locks.items()):
            if not lock.locked() and room_id not in arena.rooms:
                del self._locks[room_id]
        for room_id in [r for r in self._requests if r not in arena.rooms]:
            del self._requests[room_id]

    async def _check_member_nodes(self) -> None:
        """Members of our rooms whose node died are disconnected: they have the grace
        period to resume on another node, or lose by abandonment."""
        peers = {n for n in self.routes.values() if n != self.node}
        if not peers:
            return
        alive = await self.presence.nodes_alive(sorted(peers))
        dead = {n for n, ok in alive.items() if not ok}
        if not dead:
            return
        for sid, node in list(self.routes.items()):
            if node not in dead:
                continue
            del self.routes[sid]
            for room in list(self.arena.rooms.values()):
                if sid in room.members:
                    room.post(room.disconnected, sid)
                    if room.seat_of(sid) is not None:
                        self._await_attach(room, sid)
        log.warning("member_nodes_gone", nodes=sorted(dead))

    async def _try_take_over(self, room_id: str) -> None:
        try:
            room = await self.take_over(room_id)
            if room is None:
                owner = await self.presence.room_owner(room_id)
                if owner is not None and owner != self.node and self.remote.get(room_id) != owner:
                    self._attach(room_id, owner)
        except PresenceError as exc:
            log.warning("takeover_failed", room=room_id, error=str(exc))
        except Exception:
            log.exception("takeover_failed", room=room_id)
