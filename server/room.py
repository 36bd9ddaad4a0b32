"""A room: one asyncio task and one inbox, so its events happen one at a time.

Everything that changes a room goes through :meth:`Room.ask` (a request whose
answer or typed error comes back to the caller) or :meth:`Room.post` (timers,
disconnects). What the room *is* lives in :mod:`server.room_state` (sans I/O:
``decide`` a command into events, ``apply`` each); this actor adds the I/O:
clocks (asyncio timers armed for the match's deadline), ratings, records, the
lobby entry, and delivery to the members.

Every room event is appended to the room's log in presence (which gives it its
``seq``) *before* it is sent to anyone, so no client ever hears of a move the
log does not hold, and anyone can catch up from a ``seq``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from engine.base import Result, game_class
from engine.match import Match
from protocol import messages as m
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import MAX_EVENTS
from protocol.timecontrol import engine_time_control
from server import room_state as rs
from server.host import Host
from server.outgoing import Outgoing
from server.presence import PresenceError
from server.private_records import private_record_fields
from server.ratings import Rating, rate_game
from server.room_state import RoomSettings, RoomState, SeatState
from server.tasks import checkpoint

log = structlog.get_logger("arena.room")

#: events after which (several nodes) the members' sessions are saved, before the event is logged
MEMBERSHIP_EVENTS = frozenset(
    {"player_joined", "player_left", "seat_taken", "seat_freed", "game_started"}
)


def _public(event: dict[str, Any]) -> dict[str, Any]:
    """A logged event as it was sent: without the forwarded request's id it was logged with."""
    return {k: v for k, v in event.items() if k != "request"}


__all__ = ["Room", "RoomSettings", "SeatState", "engine_time_control", "now_ms", "room_meta"]


def player_wire(player: dict[str, Any]) -> dict[str, Any]:
    """A protocol ``Player`` as wire data, built directly: exactly ``to_wire(Player(**player))``."""
    return {
        "name": player["name"],
        "guest": player.get("guest", False),
        "bot": player.get("bot", False),
        "rating": player.get("rating"),
    }


def now_ms() -> int:
    """Wall-clock milliseconds, for timestamps shown to people."""
    return int(time.time() * 1000)


def room_meta(room: Room, node: str) -> dict[str, Any]:
    """What presence keeps of a room besides its log: settings, owner, members' sessions."""
    names = {st.session: st.player["name"] for st in room.seats if st is not None}
    members = {}
    for sid, role in room.members.items():
        name = names.get(sid) or room.arena.session_name(sid)
        members[sid] = {"role": role, "name": name}
    return {**room.settings_dict, "node": node, "members": members}


class Room:
    def __init__(
        self,
        arena: Host,
        settings: RoomSettings,
        labels: list[str] | None = None,
        state: RoomState | None = None,
    ) -> None:
        """``labels``: the seats' names if the caller knows them (else a trial deal);
        ``state``: the room as restored from its log (:func:`server.room_state.restore`)."""
        self.arena = arena
        self.settings = settings
        self.id = settings.room_id
        self.state = state if state is not None else rs.initial(settings, labels)
        self._saved_meta: dict[str, Any] | None = None
        self._settings_dict: dict[str, Any] | None = None
        #: the forwarded request being run (server.cluster): logged with its events
        self.request: str | None = None
        self._inbox: asyncio.Queue[tuple[Callable[..., Awaitable[Any]], tuple, Any]] = (
            asyncio.Queue()
        )
        self._task: asyncio.Task[None] | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._moves_metric = arena.metrics.moves.labels(settings.game)
        #: events logged with the next one (``_log_and_send(hold=True)``): the event, its
        #: wire data and packed form as logged, the reply, the members to send it to
        self._held: list[tuple[Outgoing, dict[str, Any], bytes, tuple | None, list[str]]] = []
        #: the lobby entry's time control (settings never change): dumped once
        self._time_control_wire = settings.time_control.model_dump(mode="json")
        self.log = log.bind(room=self.id)

    # -- the state (server.room_state) ------------------------------------------------
    @property
    def seats(self) -> list[SeatState | None]:
        return self.state.seats

    @property
    def members(self) -> dict[str, str]:
        return self.state.members

    @property
    def match(self) -> Match | None:
        return self.state.match

    @property
    def labels(self) -> list[str]:
        return self.state.labels

    @property
    def game_number(self) -> int:
        return self.state.game_number

    @property
    def record_id(self) -> str | None:
        return self.state.record_id

    @property
    def rematch_offers(self) -> set[int]:
        return self.state.rematch_offers

    @property
    def started_players(self) -> list[dict[str, Any] | None]:
        return self.state.started_players

    @property
    def seq(self) -> int:
        return self.state.seq

    @seq.setter
    def seq(self, value: int) -> None:
        self.state.seq = value

    @property
    def closed(self) -> bool:
        return self.state.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        self.state.closed = value

    @property
    def settings_dict(self) -> dict[str, Any]:
        """The settings as presence keeps them (they never change: dumped once)."""
        if self._settings_dict is None:
            self._settings_dict = self.settings.to_dict()
        return self._settings_dict

    def _apply(self, event: rs.Event) -> list[dict[str, Any]]:
        """Apply ``event`` to the state; what the match answered (game events)."""
        return rs.apply(self.state, event).outcome

    # -- the actor --------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")

    async def _run(self) -> None:
        try:
            await self._serve_inbox()
        finally:
            self.state.closed = True
            while not self._inbox.empty():  # nobody may wait forever on a closed room
                _, _, fut = self._inbox.get_nowait()
                if fut is not None and not fut.done():
                    fut.set_exception(ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room closed"))

    async def _serve_inbox(self) -> None:
        while True:
            checkpoint()  # cancelled (only at exit) but went on: server.tasks
            fn, args, fut = await self._inbox.get()
            if fn is None:
                return
            if self.closed:  # asked before an earlier message closed the room
                if fut is not None and not fut.done():
                    fut.set_exception(ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room closed"))
                continue
            try:
                try:
                    result = await fn(*args)
                finally:
                    if self._held:  # (an error after a held event): the turn logs it
                        await self._log_held()
            except Exception as exc:
                if not isinstance(exc, PresenceError):
                    exc = await self.arena.cluster.check_refusal(self, exc)
                if isinstance(exc, PresenceError):
                    self.arena.cluster.retire(self)  # restored from the log when asked again
                if fut is not None and not fut.done():
                    fut.set_exception(exc)
                elif isinstance(exc, PresenceError):  # lease lost, store out: expected
                    self.log.warning("room_task_refused", handler=fn.__name__, error=str(exc))
                elif not isinstance(exc, ProtocolError):
                    self.log.exception("room_task_failed", handler=fn.__name__)
            else:
                if fut is not None and not fut.done():
                    fut.set_result(result)

    def post(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Queue ``fn(*args)`` for the actor; nobody waits for it."""
        if not self.state.closed:
            self._inbox.put_nowait((fn, args, None))

    async def ask(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run ``fn(*args)`` in the actor and return its result (or raise its error)."""
        if self.state.closed:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "the room has closed")
        fut = self._loop.create_future()
        self._inbox.put_nowait((fn, args, fut))
        return await fut

    async def ask_then(
        self, then: Callable[[], None], fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> Any:
        """:meth:`ask`, calling ``then()`` inside the actor once ``fn`` succeeded.

        A request's ``ack`` sent this way leaves in the same loop step as the events
        the request caused, so it shares their write (server.connection).
        """

        async def run() -> Any:
            result = await fn(*args)
            then()
            return result

        run.__name__ = fn.__name__
        return await self.ask(run)

    def halt(self) -> None:
        """Stop the actor now, the queued work dropped (a retired copy: server.cluster)."""
        self.state.closed = True
        self._cancel_deadline()
        self._inbox.put_nowait((None, (), None))  # type: ignore[arg-type]

    async def stop(self) -> None:
        """Stop the actor after the queued work (server shutdown); the log keeps the game."""
        self._cancel_deadline()
        if self._task is not None and not self._task.done():
            self._inbox.put_nowait((None, (), None))  # type: ignore[arg-type]
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.state.closed = True

    # -- helpers --------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return self.state.status

    @property
    def playing(self) -> bool:
        return self.state.playing

    def seat_of(self, session: str) -> int | None:
        return self.state.seat_of(session)

    def seat_infos(self) -> list[m.SeatInfo]:
        out = []
        for i, s in enumerate(self.state.seats):
            if s is None:
                out.append(m.SeatInfo(seat=i, label=self.state.labels[i]))
            else:
                out.append(
                    m.SeatInfo(
                        seat=i,
                        label=self.state.labels[i],
                        player=m.Player(**s.player),
                        ready=s.ready,
                        connected=s.connected,
                    )
                )
        return out

    def seat_wires(self) -> list[dict[str, Any]]:
        """``seat_infos()`` as wire data, built directly (lobby updates, game starts)."""
        out: list[dict[str, Any]] = []
        for i, s in enumerate(self.state.seats):
            out.append(
                {
                    "seat": i,
                    "label": self.state.labels[i],
                    "player": None if s is None else player_wire(s.player),
                    "ready": False if s is None else s.ready,
                    "connected": True if s is None else s.connected,
                }
            )
        return out

    def spectator_count(self) -> int:
        return sum(1 for r in self.state.members.values() if r == "spectator")

    def clock(self) -> m.Clock | None:
        if self.state.match is None:
            return None
        clocks = self.state.match.clocks(self._now())
        if clocks is None:
            return None
        return m.Clock(remaining_ms=clocks, running=self.state.match.to_move())

    def _now(self) -> int:
        return int(self._loop.time() * 1000)

    def summary(self) -> m.RoomSummary:
        s = self.settings
        return m.RoomSummary(
            room=self.id,
            game=s.game,
            rules=s.rules,
            variant=s.variant,
            seats=self.seat_infos(),
            time_control=s.time_control,
            rated=s.rated,
            status=self.status,  # type: ignore[arg-type]
            spectators=self.spectator_count(),
            created_at=s.created_at,
        )

    def summary_wire(self) -> dict[str, Any]:
        """Exactly ``to_wire(self.summary())``, without building and dumping models
        (``tests/test_server_games.py`` checks the two agree)."""
        s = self.settings
        wire: dict[str, Any] = {
            "room": self.id,
            "game": s.game,
            "rules": s.rules,
            "variant": s.variant,
            "seats": self.seat_wires(),
            "time_control": self._time_control_wire,
            "rated": s.rated,
            "status": self.status,
            "spectators": self.spectator_count(),
        }
        if s.created_at is not None:
            wire["created_at"] = s.created_at
        return wire

    async def _lobby_update(self) -> None:
        summary = self._lobby_summary()
        if summary is not None:
            await self.arena.presence.lobby_upsert(self.id, summary)

    def _lobby_summary(self) -> dict[str, Any] | None:
        """The room's lobby entry as it is now; None if the room has none (private, closed)."""
        if self.settings.private or self.state.closed:
            return None
        return self.summary_wire()

    def state_for(self, session: str | None, re: Any = None) -> m.RoomState:
        s = self.settings
        seat = None if session is None else self.seat_of(session)
        role = self.state.members.get(session or "", "spectator")
        fields: dict[str, Any] = {"rules_version": game_class(s.game).version_of(s.rules)}
        match = self.state.match
        if match is not None:
            g = match.game
            fields = {
                "rules_version": g.rules_version,
                "setup": g.setup(),
                "position": g.position(),
                "view": g.view(),
                "to_move": self.state.match.to_move(),
                "legal_moves": g.legal_moves() if self.playing else [],
                "history": list(g.history),
                "clock": self.clock(),
                "result": None if match.result is None else match.result.to_dict(),
                "record": self.state.record_id,
            }
        return m.RoomState(
            re=re,
            room=self.id,
            seq=self.state.seq,
            game=s.game,
            rules=s.rules,
            variant=s.variant,
            options=s.options,
            time_control=s.time_control,
            rated=s.rated,
            private=s.private,
            invite=s.invite if session in self.state.members and role == "player" else None,
            status=self.status,  # type: ignore[arg-type]
            seats=self.seat_infos(),
            spectators=self.spectator_count(),
            you=seat,
            role=role,  # type: ignore[arg-type]
            game_number=self.state.game_number,
            rematch=sorted(self.state.rematch_offers),
            **fields,
        )

    async def emit(self, cls: type[m.RoomEventBase], **fields: Any) -> None:
        """Log the event (it gets the next seq), then send it to every member."""
        seq = self.state.seq + 1
        await self._log_and_send(Outgoing.of(cls(room=self.id, seq=seq, **fields)), seq)

    async def emit_wire(
        self, type_: str, *, lobby: bool = False, hold: bool = False, **fields: Any
    ) -> None:
        """:meth:`emit` for the frequent events, built as wire data without a model;
        ``lobby`` and ``hold`` as in :meth:`_log_and_send`.

        ``fields`` must be in the model's order and already wire data: the event is
        then exactly ``to_wire(cls(room=..., seq=..., **fields))`` (top-level nulls
        left out); ``tests/test_server_games.py`` checks the events of whole games.
        """
        seq = self.state.seq + 1
        wire: dict[str, Any] = {"type": type_, "room": self.id, "seq": seq}
        for key, value in fields.items():
            if value is not None:
                wire[key] = value
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

        ``lobby``: the room's lobby entry is updated (``_lobby_update``) with the event, in
        the same round trip; the room's state is already what the entry should show.

        ``hold``: another event follows in this turn of the actor (a leave's
        ``seat_freed`` then ``player_left``): this one is logged with it, in one round
        trip, and sent to its members (as they are now) once both are logged. Nobody is
        told of a held event before it is logged, and a turn never ends with one held
        (:meth:`_serve_inbox` logs what is left).
        """
        # the binary frame is the packed event: a store keeping msgpack need not pack it again
        wire, packed = out.wire, out.frame(True)
        if self.request is not None:  # a forwarded request's id is logged with its events
            wire, packed = {**wire, "request": self.request}, b""
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
        presence = self.arena.presence
        if len(logged) > 1:
            await presence.append_packed_many(self.id, logged, first, owner, meta, summary)
        elif meta is None:
            wire, packed = logged[0]
            await presence.append_packed(
                self.id, wire, packed, expected_seq=first, owner=owner, lobby=summary
            )
        else:
            wire, packed = logged[0]
            await presence.append_packed_saving_room(
                self.id, wire, packed, first, meta, owner, summary
            )
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
            await self.arena.presence.put_room(self.id, meta)
            self._saved_meta = meta

    def _members_meta(self) -> dict[str, Any] | None:
        """What :meth:`_save_members` would store; None if nothing changed (seats live in
        the log) or there is nothing to save (one node, or the room closed)."""
        if self.state.closed:
            return None
        meta = self.arena.cluster.members_meta(self)
        return None if meta == self._saved_meta else meta

    # -- membership -------------------------------------------------------------------------
    async def join(
        self,
        session: str,
        player: dict[str, Any] | None,
        role: str,
        re: Any,
        reply: bool = True,
        hold: bool = False,
    ) -> None:
        """Add a member and send it the room state.

        Replies are sent from inside the actor, so no later event can overtake them.
        ``hold``: the caller emits another event at once (see :meth:`_log_and_send`).
        """
        if role == "player":
            if player is None:
                raise ProtocolError(ErrorCode.NOT_AUTHENTICATED, "log in to join as a player")
            if self.state.members.get(session) != "player":
                shown = player_wire(await self._with_rating(player))
                self._apply(rs.PlayerJoined(session, shown))  # first: the joiner gets it too
                await self.emit_wire("player_joined", player=shown, hold=hold)
        elif session not in self.state.members:  # (a private room's invite was checked already)
            self._apply(rs.SpectatorJoined(session))
            await self._save_members()
            await self._lobby_update()
        if reply:
            await self.send_state(session, re)

    async def open_for(
        self, creator: str, player: dict[str, Any], seat: int | None, re: Any
    ) -> None:
        """The creator joins, takes ``seat`` (if given) and gets the state: one actor
        turn, so its events and the state share one write (server.connection)."""
        # with a seat, player_joined and seat_taken are logged together
        await self.join(creator, player, "player", None, reply=False, hold=seat is not None)
        if seat is not None:
            await self.take_seat(creator, player, seat)
        else:
            await self._lobby_update()
        await self.send_state(creator, re)

    async def send_state(self, session: str, re: Any) -> None:
        self.arena.deliver(session, Outgoing.of(self.state_for(session, re)))

    async def watch(self, session: str, since_seq: int | None, re: Any) -> None:
        """Add a spectator; send a snapshot, or the events after ``since_seq``."""
        if self.settings.private and self.state.members.get(session) is None:
            raise ProtocolError(ErrorCode.FORBIDDEN, "a private room is watched by its invite code")
        if session not in self.state.members:
            self._apply(rs.SpectatorJoined(session))
            await self._save_members()
            await self._lobby_update()
        await self.catch_up(session, since_seq, re)

    async def resume_member(self, session: str, since_seq: int | None) -> None:
        """A member's session resumed: first what it missed, then the news that it is back."""
        await self.catch_up(session, since_seq, None)
        await self.reconnected(session)

    async def catch_up(self, session: str, since_seq: int | None, re: Any) -> None:
        """Send the events after ``since_seq`` (or a snapshot when that is not possible)."""
        if since_seq is None or since_seq > self.state.seq:
            await self.send_state(session, re)
            return
        # The log holds each event's wire data as it was sent: it goes out as it is, a
        # chunk per turn of the event loop, so a long catch-up never holds up other rooms.
        # This room's own events wait in its inbox meanwhile, so the order is kept.
        last, after = self.state.seq, since_seq
        while True:
            chunk = await self.arena.presence.read_events(
                self.id, after_seq=after, limit=MAX_EVENTS
            )
            if after == since_seq and chunk and chunk[0]["seq"] != since_seq + 1:
                await self.send_state(session, re)  # the log no longer reaches back that far
                return
            if chunk:
                after = chunk[-1]["seq"]
            more = bool(chunk) and after < last
            wire: dict[str, Any] = {"type": "catch_up"}
            if re is not None:
                wire["re"] = re
            # request ids (server.cluster) stay in the log
            chunk = [e if "request" not in e else _public(e) for e in chunk]
            wire.update(room=self.id, events=chunk, more=more)
            self.arena.deliver(session, Outgoing(wire))
            if not more or not self.arena.reading(session):  # (cut off: no more pages)
                return
            await asyncio.sleep(0)

    async def take_seat(self, session: str, player: dict[str, Any], seat: int | None) -> int:
        events = rs.decide(self.state, rs.TakeSeat(session, player, seat), self._now())
        if not events:  # seated there already
            current = self.seat_of(session)
            assert current is not None
            return current
        player = await self._with_rating(player)
        for ev in events:
            if isinstance(ev, rs.SeatFreed):
                await self._free_seat(ev.seat)
            elif isinstance(ev, rs.SeatTaken):
                self._apply(dataclasses.replace(ev, player=player))
                shown = player_wire(player)
                await self.emit_wire("seat_taken", seat=ev.seat, player=shown, lobby=True)
                seat = ev.seat
        if self.settings.quick:
            await self._maybe_start(require_ready=False)
        assert seat is not None
        return seat

    async def _with_rating(self, player: dict[str, Any]) -> dict[str, Any]:
        """``player`` with its rating in this room's game, as seats and player_joined show
        it (none for a guest, or before a first rated game of it)."""
        shown = dict(player)
        if not player.get("guest"):
            known = await self.arena.presence.get_rating(self.settings.game, player["name"])
            if known is not None:
                shown["rating"] = round(Rating.from_dict(known).rating, 2)
        return shown

    async def _free_seat(self, seat: int, hold: bool = False) -> None:
        st = self.state.seats[seat]
        if st is None:
            return
        self._apply(rs.SeatFreed(seat))
        await self.emit_wire("seat_freed", seat=seat, name=st.player["name"], hold=hold)

    async def leave_seat(self, session: str) -> None:
        for ev in rs.decide(self.state, rs.LeaveSeat(session), self._now()):
            await self._free_seat(ev.seat)  # type: ignore[union-attr]
        await self._lobby_update()

    async def set_ready(self, session: str, ready: bool) -> None:
        for ev in rs.decide(self.state, rs.SetReady(session, ready), self._now()):
            assert isinstance(ev, rs.ReadyChanged)
            self._apply(ev)
            # the last ready starts the game: logged with game_started
            starts = ready and all(s is not None and s.ready for s in self.state.seats)
            await self.emit_wire("ready_changed", seat=ev.seat, ready=ready, hold=starts)
        await self._maybe_start(require_ready=True)

    async def leave(self, session: str, reason: str = "resign") -> None:
        """A member leaves; a seated player in a running game forfeits (``reason``): with
        three or more players they go out and the others play on, and a player out
        already changes nothing but their seat (ruling 3, :meth:`Match.forfeit`)."""
        role = self.state.members.get(session)
        if role is None:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "you are not in this room")
        seat = self.seat_of(session)
        if seat is not None:
            if self.playing:
                await self._forfeit(seat, reason)
            # (a seated member is a player: player_left follows, logged with it)
            await self._free_seat(seat, hold=role == "player")
        if role == "player":
            name = self.state.names.get(session) or self.arena.session_name(session) or "?"
            # the lobby entry goes with the event, unless the room closes (below): then
            # room_closed follows, logged with it
            stays = self.playing or any(
                r == "player" for s, r in self.state.members.items() if s != session
            )
            await self.emit_wire("player_left", name=name, lobby=stays, hold=not stays)
        self._apply(rs.MemberLeft(session))  # (after: the leaver hears of it too)
        self.arena.forget_room(session, self.id)
        if role == "spectator":
            await self._save_members()
        await self._after_membership_change(lobby_done=role == "player")

    async def _after_membership_change(self, lobby_done: bool = False) -> None:
        """Close the room if no player is left, else update its lobby entry (unless the
        event of the change did already: ``lobby_done``)."""
        if not any(r == "player" for r in self.state.members.values()) and not self.playing:
            await self.close("empty")
        elif not lobby_done:
            await self._lobby_update()

    async def close(self, reason: str) -> None:
        if self.state.closed:
            return
        self._cancel_deadline()
        await self.emit_wire("room_closed", reason=reason)
        members = list(self.state.members)
        self._apply(rs.RoomClosed())
        for session in members:
            self.arena.forget_room(session, self.id)
        await self.arena.room_closed(self)
        self._inbox.put_nowait((None, (), None))  # type: ignore[arg-type]

    async def disconnected(self, session: str) -> None:
        """The member's connection dropped; it has the grace period to resume."""
        seat = self.seat_of(session)
        if seat is None:
            return
        st = self.state.seats[seat]
        assert st is not None
        if st.connected:
            self._apply(rs.ConnectionChanged(seat, False))
            await self.emit(
                m.PlayerDisconnected,
                name=st.player["name"],
                seat=seat,
                grace_ms=int(self.arena.config.grace * 1000),
            )

    async def reconnected(self, session: str) -> None:
        seat = self.seat_of(session)
        if seat is None:
            return
        st = self.state.seats[seat]
        assert st is not None
        if not st.connected:
            self._apply(rs.ConnectionChanged(seat, True))
            await self.emit(m.PlayerReconnected, name=st.player["name"], seat=seat)

    async def session_gone(self, session: str) -> None:
        """The grace period ran out: the member is gone for good (abandonment if playing)."""
        if session in self.state.members:
            await self.leave(session, reason="abandon")

    # -- the game -----------------------------------------------------------------------------
    def _seated(self, session: str) -> int:
        return rs.seated(self.state, session)

    async def _maybe_start(self, require_ready: bool) -> None:
        start = rs.Start(require_ready, seed=secrets.randbelow(2**31))
        for ev in rs.decide(self.state, start, self._now()):
            await self._start_game(ev)  # type: ignore[arg-type]

    async def _start_game(self, ev: rs.GameStarted) -> None:
        s = self.settings
        outcome = self._apply(ev)
        match = self.state.match
        assert match is not None
        players = list(match.players)
        g = match.game
        # game_started as wire data, built directly: exactly to_wire(GameStarted(...))
        # (tests/test_server_games.py compares every logged event with its model's wire)
        seq = self.state.seq + 1
        to_move = match.to_move()
        position, view, legal = g.position_view_moves()
        wire: dict[str, Any] = {
            "type": "game_started",
            "room": self.id,
            "seq": seq,
            "game_number": self.state.game_number,
            "seats": self.seat_wires(),
            "setup": g.setup(),
            "position": position,
            "view": view,
        }
        if to_move is not None:
            wire["to_move"] = to_move
        wire["legal_moves"] = legal if not match.over else []
        clocks = match.clocks()
        if clocks is not None:
            wire["clock"] = {"remaining_ms": clocks, "running": to_move}
        await self._log_and_send(Outgoing(wire), seq, lobby=True)
        self.arena.metrics.games_started.labels(s.game).inc()
        self.arena.metrics.games_live.inc()
        self.log.info("game_started", game=s.game, number=self.state.game_number, players=players)
        await self._log_outcome(outcome)  # (a deal nobody can move in: game_over updates it)

    async def move(self, session: str, move: str, re: Any = None) -> None:
        """Play ``move``; with ``re`` (a ``move`` with ``reply: "event"``) the mover's
        ``move_made`` carries it as the reply."""
        (ev,) = rs.decide(self.state, rs.Move(session, move), self._now())
        outcome = self._apply(ev)  # the match refuses an illegal move before any change
        await self._log_outcome(outcome, None if re is None else (session, re))
        if outcome[0]["type"] != "move":  # a flag fell before the move arrived: not played
            seat = ev.seat  # type: ignore[union-attr]
            if self.state.match.over or seat in self.state.match.game.eliminated():  # type: ignore[union-attr]
                raise ProtocolError(ErrorCode.GAME_OVER, "time ran out before the move arrived")
            # (3-4 players) another player's time ran out first and the game goes on:
            # the move was sent out of turn; player_eliminated says who is to move now
            raise ProtocolError(
                ErrorCode.NOT_YOUR_TURN, "a player's time ran out before the move arrived"
            )

    async def resign(self, session: str) -> None:
        for ev in rs.decide(self.state, rs.Resign(session), self._now()):
            await self._log_outcome(self._apply(ev))

    async def abort(self, session: str) -> None:
        """A player ends the game without a result, before everyone has moved."""
        seat = self._seated(session)
        if self.match is None:
            raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
        await self._log_outcome(self.match.abort_by(seat, self._now()))

    async def _forfeit(self, seat: int, reason: str) -> None:
        await self._log_outcome(self._apply(rs.Forfeit(seat, reason, self._now())))

    async def _on_deadline(self) -> None:
        if self.state.match is not None:
            await self._log_outcome(self._apply(rs.FlagCheck(self._now())))

    async def _log_outcome(self, events: list[dict[str, Any]], reply: tuple | None = None) -> None:
        """Log and send what the match answered (its event dicts), in order.

        ``reply`` (session, request id): the ``move_made`` of that session's move is its reply.
        """
        assert self.state.match is not None
        for ev in events:
            if ev["type"] == "move":
                self._moves_metric.inc()
                seq = self.state.seq + 1
                await self._log_and_send(Outgoing(self.move_wire(seq, ev)), seq, reply)
            elif ev["type"] == "eliminated":
                # ruling 3: a forfeit with two others or more still in; the game goes on
                await self.emit(m.PlayerEliminated, **self.eliminated_fields(ev))
            elif ev["type"] == "game_over":
                if ev["clocks"] is not None and ev["result"]["reason"] == "timeout":
                    await self.emit(
                        m.ClockUpdate, clock=m.Clock(remaining_ms=ev["clocks"], running=None)
                    )
                await self._finish(Result.from_dict(ev["result"]))
        self.arm_deadline()

    def move_wire(self, seq: int, ev: dict[str, Any]) -> dict[str, Any]:
        """The ``move_made`` event as wire data, built directly on the hot path.

        Exactly ``to_wire(MoveMade(...))`` (same keys, same order, top-level nulls
        left out), without building and dumping a model for every move;
        ``tests/test_server_games.py`` checks the two agree on every event.
        """
        assert self.state.match is not None
        g = self.state.match.game
        over = self.state.match.over or g.is_over()
        position, view, legal = g.position_view_moves()
        wire: dict[str, Any] = {
            "type": "move_made",
            "room": self.id,
            "seq": seq,
            "ply": ev["ply"],
            "seat": ev["seat"],
            "move": ev["move"],
            "position": position,
            "view": view,
        }
        if ev["to_move"] is not None:
            wire["to_move"] = ev["to_move"]
        wire["legal_moves"] = [] if over else legal
        if ev["clocks"] is not None:
            wire["clock"] = {"remaining_ms": list(ev["clocks"]), "running": ev["to_move"]}
        return wire

    def eliminated_fields(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The ``player_eliminated`` event's fields for the match's ``eliminated`` event
        (the position as it is now: the event is applied before the next one happens)."""
        assert self.state.match is not None
        g = self.state.match.game
        over = self.state.match.over or g.is_over()
        position, view, legal = g.position_view_moves()
        clock = None
        if ev["clocks"] is not None:
            clock = m.Clock(remaining_ms=list(ev["clocks"]), running=ev["to_move"])
        return {
            "seat": ev["seat"],
            "reason": ev["reason"],
            "ply": ev["ply"],
            "position": position,
            "view": view,
            "to_move": ev["to_move"],
            "legal_moves": [] if over else legal,
            "clock": clock,
        }

    def arm_deadline(self) -> None:
        self._cancel_deadline()
        if self.state.match is None or self.state.closed:
            return
        deadline = self.state.match.deadline_ms()
        if deadline is not None:
            self._deadline = self._loop.call_at(
                deadline / 1000, lambda: self.post(self._on_deadline)
            )

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    async def finish_unfinished(self) -> None:
        """Rate and record a game that ended without its ``game_over`` logged (a restore)."""
        if self.state.unfinished:
            assert self.state.match is not None and self.state.match.result is not None
            await self._finish(self.state.match.result)

    async def _finish(self, result: Result) -> None:
        assert self.state.match is not None
        s = self.settings
        self._cancel_deadline()
        record_id = f"{self.id}-{self.state.game_number}"
        changes: list[dict[str, Any]] = []
        if s.rated and result.reason != "aborted":
            changes = await self._rate(result)
        finished = now_ms()
        record = self.state.match.record_dict()
        record["room"] = self.id
        await self.arena.records.save(
            record_id,
            {
                "game": s.game,
                "players": list(self.state.match.players),
                "data": record,
                "rated": s.rated,
                "ratings": changes,
                "finished_at": finished,
                "ended_at": finished,
                **private_record_fields(s.private, s.invite),
            },
        )
        self._apply(rs.GameOver(result.to_dict(), changes, record_id, self._now()))
        await self.emit_wire(
            "game_over",
            game_number=self.state.game_number,
            result=result.to_dict(),
            ratings=changes,
            record=record_id,
            lobby=True,
        )
        self.arena.metrics.games_finished.labels(s.game, result.reason).inc()
        self.arena.metrics.games_live.dec()
        self.log.info("game_over", number=self.state.game_number, result=result.to_dict())

    async def _rate(self, result: Result) -> list[dict[str, Any]]:
        """Rate the game; the changes as protocol ``RatingChange`` wire data."""
        presence = self.arena.presence
        game = self.settings.game
        names = list(self.state.match.players)  # type: ignore[union-attr]
        started = list(self.state.started_players)
        started += [None] * (len(names) - len(started))
        players = [
            st.player if st is not None and st.player["name"] == n else p
            for st, n, p in zip(self.state.seats, names, started, strict=False)
        ]
        before = [Rating.from_dict(await presence.get_rating(game, n)) for n in names]
        after = rate_game(before, result)
        await presence.put_ratings(
            game,
            {
                n: {**a.to_dict(), "bot": bool(p and p.get("bot"))}
                for n, a, p in zip(names, after, players, strict=True)
            },
        )
        return [
            {"seat": i, "name": n, "before": round(b.rating, 2), "after": round(a.rating, 2)}
            for i, (n, b, a) in enumerate(zip(names, before, after, strict=True))
        ]

    # -- rematch and chat ----------------------------------------------------------------------
    async def offer_rematch(self, session: str, accept: bool) -> None:
        offer = rs.OfferRematch(session, accept, seed=secrets.randbelow(2**31))
        for ev in rs.decide(self.state, offer, self._now()):
            if isinstance(ev, rs.RematchOffered):
                self._apply(ev)
                await self.emit(m.RematchOffered, seat=ev.seat)
            else:
                assert isinstance(ev, rs.GameStarted)
                await self._start_game(ev)

    async def chat(self, session: str, name: str, text: str) -> None:
        role = self.state.members.get(session)
        if role is None:
            raise ProtocolError(ErrorCode.UNKNOWN_ROOM, "join the room to chat in it")
        await self.emit(m.ChatMessage, name=name, text=text, spectator=role == "spectator")
