"""The rooms a :class:`clients.client.Client` is in: each room's events in ``seq`` order.

Why apart: the client's connection and requests are one thing; keeping each room's
events once and in order (duplicates dropped, a gap asked for and filled, the cursors a
resume sends) is another, with its own state per room (:class:`RoomTrack`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection

from clients.arena_errors import ArenaError
from protocol import messages as m
from protocol.limits import MAX_CURSORS

#: times a gap's missing events are asked for when the server says to retry later
_GAP_ASKS = 5


class RoomTrack:
    """What the client knows of one room: its last seq, latest snapshot, events since."""

    def __init__(self) -> None:
        self.seq = 0
        self.state: m.RoomState | None = None
        self.events: list[Any] = []
        #: (expected seq, received seq) whenever an event arrived out of order
        self.gaps: list[tuple[int, int]] = []
        #: events that arrived after a gap, kept (by seq) until the missing ones are in
        self.ahead: dict[int, Any] = {}
        #: a watch with since_seq is on its way for the missing events
        self.asking = False
        #: the session is in the room (False once left or closed, or the session is gone):
        #: only such rooms are listed in a resume
        self.live = False
        #: when the room last sent something (the client's count of messages), so a resume
        #: lists the most recent rooms first
        self.last = 0


class RoomTracking:
    """The client's rooms (a part of :class:`clients.client.Client`, which gives it the
    connection, its requests and the delivery of what arrives)."""

    rooms: dict[str, RoomTrack]
    ws: ClientConnection | None
    keep_events: bool
    _asks: set[asyncio.Task[None]]
    _ticks: itertools.count[int]
    _arrived: asyncio.Event

    async def request(self, msg: BaseModel, timeout: float = 10.0) -> Any:
        """Send ``msg`` and return the reply (the client's)."""
        raise NotImplementedError

    def _accept(self, msg: Any, replayed: list[Any]) -> None:
        """Deliver ``msg`` and the events ``replayed`` with it (the client's)."""
        raise NotImplementedError

    def _cursors(self) -> list[m.RoomCursor]:
        """The rooms the session is in, with their last seq: the most recent first, as many
        as a resume lists (PROTOCOL.md, Sessions; the others get a snapshot)."""
        live = [(r, t) for r, t in self.rooms.items() if t.live]
        live.sort(key=lambda rt: rt[1].last, reverse=True)
        return [m.RoomCursor(room=r, seq=t.seq) for r, t in live[:MAX_CURSORS]]

    def _leave_all(self) -> None:
        """The session ended (or is gone): it is in no room any more."""
        for track in self.rooms.values():
            track.live = False

    def _fill_gap(self, room: str, track: RoomTrack) -> None:
        """Apply the events kept after a gap that are now next in line; ask again if
        the catch-up (or snapshot) left a gap before them."""
        while track.ahead:
            first = min(track.ahead)
            if first <= track.seq:
                del track.ahead[first]  # the catch-up or snapshot held it already
            elif first == track.seq + 1:
                ev = track.ahead.pop(first)
                self._room_event(ev)
                self._accept(ev, [])
            else:
                self._ask_missing(room, track)
                return

    def _ask_missing(self, room: str, track: RoomTrack) -> None:
        """A gap: ask for the events after the last one applied (PROTOCOL.md, Envelope)."""
        if track.asking or self.ws is None:
            return
        track.asking = True
        task = asyncio.get_running_loop().create_task(self._ask_until_answered(room, track))
        self._asks.add(task)
        task.add_done_callback(self._asks.discard)

    async def _ask_until_answered(self, room: str, track: RoomTrack) -> None:
        """Ask for the missing events; a refusal with ``retry_after`` (``rate_limited``,
        ``unavailable``) is asked again after it, a few times. If no answer fills the gap,
        the next event after it asks again (and a reconnect's resume always does)."""
        ws = self.ws
        for _ in range(_GAP_ASKS):
            try:
                await self.request(m.Watch(room=room, since_seq=track.seq))
                return  # the catch-up (or snapshot) is applied as it arrives
            except ArenaError as err:
                if err.retry_after is None or self.ws is not ws:
                    break
                await asyncio.sleep(err.retry_after / 1000)
            except TimeoutError:
                break
        if self.ws is ws:
            track.asking = False

    def _room_event(self, ev: Any) -> bool:
        """Track a room event; False if it was already seen (or is in the snapshot), or if
        events before it are missing: then it is kept until they arrive, and asked for."""
        track = self.rooms.setdefault(ev.room, RoomTrack())
        if ev.seq <= track.seq:
            return False
        if ev.type == "room_closed":  # its last event, even after a gap: the room (and
            track.ahead.clear()  # its log) is gone, nothing before it can be asked for
        elif ev.seq != track.seq + 1 and (track.seq or track.state is not None):
            if not track.ahead:
                track.gaps.append((track.seq + 1, ev.seq))
            track.ahead[ev.seq] = ev
            self._ask_missing(ev.room, track)
            return False
        track.seq = ev.seq
        if self.keep_events:
            # the mover's own move_made may come as its reply (with re): keep the event as
            # everyone else saw it and the room's log holds it
            track.events.append(ev if ev.re is None else ev.model_copy(update={"re": None}))
        return True

    async def _snapshots(self, rooms: list[str], tick: int) -> None:
        """Until each of ``rooms`` has had a message since ``tick`` (its snapshot, or its
        ``room_closed``: they follow the login's reply), for at most 5 s."""

        def heard(room: str) -> bool:
            track = self.rooms.get(room)
            return track is not None and track.last > tick

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                while not all(map(heard, rooms)):
                    self._arrived.clear()
                    await self._arrived.wait()
