"""A node's inbox: the messages other nodes send it (deliveries, forwarded requests and
their replies, re-attachments), and the members of rooms owned elsewhere, kept
attached to the room's owner and delivered each event once and in seq order (mixed
into :class:`server.cluster.Cluster`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from protocol.messages import ROOM_EVENT_TYPES
from protocol.outgoing import Outgoing
from server import node_messages as nm
from server import room_calls as rc
from server.presence import PresenceError
from server.quick_seating import left_queue, requeue
from server.room import Room
from server.tasks import checkpoint

log = structlog.get_logger("arena.cluster")


class NodeInbox:
    """The node-to-node inbox of :class:`server.cluster.Cluster`."""

    async def _inbox_loop(self) -> None:
        first = True
        while True:
            checkpoint()
            try:
                sub = await self.presence.bus.subscribe(self.node)
            except PresenceError:
                await asyncio.sleep(0.25)
                continue
            if not first:  # messages may have been missed meanwhile: catch up every member
                self._attach_all()
                # and the nodes whose members are in our rooms re-attach theirs
                peers = set(self.routes.values()) | set(self.remote.values())
                for node in peers - {self.node}:
                    self.send(node, nm.Resync(self.node))
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

    def _handle(self, data: dict[str, Any]) -> None:
        """One message from another node (:mod:`server.node_messages`)."""
        msg = nm.decode(data)
        arena = self.arena
        match msg:
            case nm.Deliver(sessions, message):
                out = Outgoing(message)
                for sid in sessions:
                    s = arena.sessions.get(sid)
                    if s is not None and s.conn is not None and not arena.held(s, out):
                        admitted = self._admit(sid, out)
                        if admitted is not None:
                            s.conn.send(admitted)
                            self.note(sid, admitted)
            case nm.Call():
                self._serve_call(msg)
            case nm.Reply():
                self._on_reply(msg)
            case nm.Forget(sid, room_id):
                self.cursors.pop((sid, room_id), None)
                s = arena.sessions.get(sid)
                if s is not None and room_id in s.rooms:
                    s.rooms.discard(room_id)
                    arena.spawn(arena.session_service.save(s))
            case nm.Drop(sid):
                arena.session_service.drop(sid)
            case nm.Rooms(sid, rooms, since):  # another node's matchmaker seated our session
                s = arena.sessions.get(sid)
                if s is not None:
                    s.rooms |= set(rooms)
                    if since is not None:  # (from that queue entry)
                        arena.spawn(left_queue(arena, s, since))
                    arena.spawn(arena.session_service.save(s))
            case nm.LeaveQueue(sid):
                if (s := arena.sessions.get(sid)) is not None:
                    arena.spawn(left_queue(arena, s, None))
            case nm.Requeue(sid, queue, rating, data):
                if (s := arena.sessions.get(sid)) is not None:
                    arena.spawn(requeue(arena, s, queue, rating, data))
            case nm.Resync():
                self._attach_all()
            case nm.Attach(room_id, origin):  # the room's owner took it (back) over: follow it
                arena.spawn(self._reattach(room_id, origin))
            case nm.ChallengeTo() | nm.ChallengeOver():
                arena.challenges.remote(msg)
            case nm.CatchUpFrom():
                self._serve_catch_up(msg)

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
        self.send(owner, self.call_message(room_id, rc.CatchUp(sid, cursor)))

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
            if await self.presence.leases.owner(room_id) != owner:
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
                    node = ((await self.presence.sessions.get(sid)) or {}).get("node")
            if node and node != self.node:
                nodes.add(node)
        for node in sorted(nodes):
            self.send(node, nm.Attach(room.id, self.node))

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
            self.send(owner, self.call_message(room_id, rc.ResumeMember(sid, cursor)))

    def _attach_all(self) -> None:
        for room_id, owner in list(self.remote.items()):
            if room_id not in self.arena.rooms:
                self._attach(room_id, owner)
