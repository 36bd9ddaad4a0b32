"""A room's events: logged in presence first (which gives each its ``seq``), then sent
to the members (mixed into :class:`server.room.Room`).

No client ever hears of an event the log does not hold, and anyone can catch up
from a ``seq``: :meth:`RoomLog.catch_up` sends the logged events as they were sent.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m
from protocol.fastwire import event_wire
from protocol.outgoing import Outgoing
from server.catch_up import CatchUpStream

#: events after which (several nodes) the members' sessions are saved, before the event is logged
MEMBERSHIP_EVENTS = frozenset(
    {"player_joined", "player_left", "seat_taken", "seat_freed", "game_started"}
)


class RoomLog:
    """Log-then-send for :class:`server.room.Room`."""

    async def emit(self, cls: type[m.RoomEventBase], **fields: Any) -> None:
        """Log the event (it gets the next seq), then send it to every member."""
        seq = self.state.seq + 1
        await self._log_and_send(Outgoing.of(cls(room=self.id, seq=seq, **fields)), seq)

    async def emit_wire(
        self, type_: str, *, lobby: bool = False, hold: bool = False, **fields: Any
    ) -> None:
        """:meth:`emit` for the frequent events, built as wire data without a model;
        ``lobby`` and ``hold`` as in :meth:`_log_and_send`.

        ``fields`` must be in the model's order and already wire data
        (:func:`protocol.fastwire.event_wire`); ``tests/test_server_games.py`` checks
        the events of whole games.
        """
        seq = self.state.seq + 1
        wire = event_wire(type_, self.id, seq, fields)
        await self._log_and_send(Outgoing(wire), seq, lobby=lobby, hold=hold)

    async def _log_and_send(
        self,
        out: Outgoing,
        seq: int,
        reply: tuple | None = None,
        lobby: bool = False,
        hold: bool = False,
    ) -> None:
        """``reply``: (session, request id): that member gets the event as its reply (``re``).

        ``lobby``: the room's lobby entry is updated (``update_lobby``) with the event, in
        the same round trip; the room's state is already what the entry should show.

        ``hold``: another event follows in this turn of the actor (a leave's
        ``seat_freed`` then ``player_left``): this one is logged with it, in one round
        trip, and sent to its members (as they are now) once both are logged. Nobody is
        told of a held event before it is logged, and a turn never ends with one held
        (:meth:`_serve_inbox` logs what is left).
        """
        # the binary frame is the packed event: a store keeping msgpack need not pack it again
        wire, packed = out.wire, out.frame(True)
        if self.request_key is not None:  # a forwarded request's id is logged with its events
            wire, packed = {**wire, "request": self.request_key}, b""
        if hold or self._held:
            assert not (hold and lobby), "the lobby entry goes with the last event"
            self._held.append((out, wire, packed, reply, list(self.state.members)))
            self.state.seq = seq
            if not hold:
                await self._log_held(lobby)
            return
        await self._append([(wire, packed)], seq, (out.type,), lobby)
        self.state.seq = seq
        self._send(out, reply, list(self.state.members))

    async def _log_held(self, lobby: bool = False) -> None:
        """Log the held events in one round trip, then send each to its members."""
        held, self._held = self._held, []
        first = self.state.seq - len(held) + 1
        try:
            logged = [(wire, packed) for _, wire, packed, _, _ in held]
            await self._append(logged, first, [h[0].type for h in held], lobby)
        except BaseException:
            self.state.seq = first - 1  # none of them is logged
            raise
        for out, _, _, reply, members in held:
            self._send(out, reply, members)

    async def _append(
        self, logged: list[tuple[dict[str, Any], bytes]], first: int, types: Any, lobby: bool
    ) -> None:
        """Log events (wire data, packed) from seq ``first`` in one round trip: with the
        lobby entry when ``lobby``, with the members (several nodes) after a membership
        event, fenced by this node's lease."""
        summary = self._lobby_summary() if lobby else None
        meta = None
        if not MEMBERSHIP_EVENTS.isdisjoint(types):
            meta = self._members_meta()  # the members as they are after the last one
        owner = self.arena.cluster.owner
        await self.arena.presence.rooms.append(self.id, logged, first, owner, meta, summary)
        if meta is not None:
            self._saved_meta = meta

    def _send(self, out: Outgoing, reply: tuple | None, members: list[str]) -> None:
        """``out`` to each member; ``reply`` (session, request id) gets it as its reply."""
        for session in members:
            if reply is not None and session == reply[0]:
                self.arena.deliver(session, out.replying(reply[1]))
            else:
                self.arena.deliver(session, out)

    async def _save_members(self) -> None:
        """Several nodes: keep the members' sessions in presence, so a takeover knows them."""
        meta = self._members_meta()
        if meta is not None:
            await self.arena.presence.rooms.put(self.id, meta)
            self._saved_meta = meta

    def _members_meta(self) -> dict[str, Any] | None:
        """What :meth:`_save_members` would store; None if nothing changed (seats live in
        the log) or there is nothing to save (one node, or the room closed)."""
        if self.state.closed:
            return None
        meta = self.arena.cluster.members_meta(self)
        return None if meta == self._saved_meta else meta

    async def send_state(self, session: str, re: Any) -> None:
        self.arena.deliver(session, Outgoing.of(self.state_for(session, re)))

    async def catch_up(self, session: str, since_seq: int | None, re: Any) -> bool:
        """Send the events after ``since_seq`` (or a snapshot when that is not possible);
        whether they were events (False: a snapshot)."""
        if since_seq is None or since_seq > self.state.seq:
            await self.send_state(session, re)
            return False
        first = await self.arena.presence.rooms.read_events(self.id, after_seq=since_seq, limit=1)
        if first and first[0]["seq"] != since_seq + 1:
            await self.send_state(session, re)  # the log no longer reaches back that far
            return False
        # The pages are read and sent by the asker's connection, outside this worker,
        # while this room goes on (server.catch_up); its live events queue behind them.
        stream = CatchUpStream(
            self.id, since_seq, self.state.seq, re, self.arena.presence.rooms.read_events, _no_note
        )
        if not self.arena.stream_catch_up(session, stream):
            # a session of another node: that node reads and sends the pages, outside
            # this worker too, in order with the events sent to it after (cluster_catch_up)
            self.arena.cluster.stream_catch_up(session, stream)
        return True


def _no_note(out: Outgoing) -> None:
    """(The arena notes what it delivers itself.)"""
