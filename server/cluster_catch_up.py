"""Catch-ups for sessions connected to another node, served by that node from the log
(mixed into :class:`server.cluster.Cluster`).

A room fixes what a catch-up covers (the events after the asker's ``seq`` up to the
room's own, at that moment: :meth:`server.room_log.RoomLog.catch_up`). For a session
of this node, its connection reads and sends the pages itself (server.catch_up). For a
session connected to another node, the room sends that node the range
(:class:`server.node_messages.CatchUpFrom`), in its ordered outbox with the room's
other messages for it; the session's node reads the pages from the shared log and
its connection sends them as its socket takes them, charged to the asker by size,
with the room's live events that follow queued behind them. The room's worker never
reads a page: a long catch-up, a slow store or a reader that does not read holds up
nobody but the asker.
"""

from __future__ import annotations

from typing import Any

from server import node_messages as nm
from server.catch_up import CatchUpStream


class RemoteCatchUps:
    """Both ends of a catch-up for a session of another node."""

    arena: Any
    node: str
    presence: Any
    routes: dict[str, str]
    cursors: dict[tuple[str, str], int]

    def send(self, node: str, item: Any) -> None: ...  # (server.cluster.Cluster)

    def stream_catch_up(self, session: str, stream: CatchUpStream) -> bool:
        """The room's end: ``stream``'s range to the node holding ``session``; False when
        it is held nowhere this node knows of (nobody to send to)."""
        node = self.routes.get(session)
        if node is None or node == self.node:
            return False
        self.send(node, nm.CatchUpFrom(session, stream.room, stream.since, stream.last, stream.re))
        return True

    def _serve_catch_up(self, msg: nm.CatchUpFrom) -> None:
        """The session's end: its connection streams the range from the log. What this
        node already passed on of the room is left out, and its cursor moves to the
        range's end at once: the live events after it (already on their way behind this
        message) must not look like a gap."""
        arena = self.arena
        s = arena.sessions.get(msg.session)
        if s is None or s.conn is None:
            return
        key = (msg.session, msg.room)
        since = max(msg.since, self.cursors.get(key, msg.since))
        if since >= msg.last and msg.re is None:  # nothing new, and no reply owed
            s.resuming.discard(msg.room)  # (the room's live events may flow now)
            return
        read = self.presence.rooms.read_events
        stream = CatchUpStream(msg.room, since, msg.last, msg.re, read, _no_note)
        if arena.stream_catch_up(msg.session, stream):
            self.cursors[key] = max(self.cursors.get(key, 0), msg.last)


def _no_note(out: Any) -> None:
    """(Replaced by the arena, which notes what the connection sends.)"""
