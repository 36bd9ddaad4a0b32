"""Who is in a room: joins, seats, readiness, leaves, disconnects and the room's close
(mixed into :class:`server.room.Room`; each change decided by :mod:`server.room_state`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from protocol import messages as m
from protocol.errors import ErrorCode, ProtocolError
from protocol.fastwire import player_wire
from server import room_commands as rc
from server import room_state as rs
from server.ratings import Rating


class RoomMembership:
    """The members of :class:`server.room.Room`."""

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
            await self.update_lobby()
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
            await self.update_lobby()
        await self.send_state(creator, re)

    async def watch(self, session: str, since_seq: int | None, re: Any) -> None:
        """Add a spectator; send a snapshot, or the events after ``since_seq``."""
        if self.settings.private and self.state.members.get(session) is None:
            raise ProtocolError(ErrorCode.FORBIDDEN, "a private room is watched by its invite code")
        if session not in self.state.members:
            self._apply(rs.SpectatorJoined(session))
            await self._save_members()
            await self.update_lobby()
        if await self.catch_up(session, since_seq, re):
            self.tell_spectators(session)  # (not in the log: told after the catch-up)

    async def resume_member(self, session: str, since_seq: int | None) -> None:
        """A member's session resumed: first what it missed, then the news that it is back."""
        if await self.catch_up(session, since_seq, None):
            self.tell_spectators(session)  # (not in the log: told after the catch-up)
        await self.reconnected(session)

    async def take_seat(self, session: str, player: dict[str, Any], seat: int | None) -> int:
        events = rc.decide(self.state, rc.TakeSeat(session, player, seat), self._now())
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
            known = await self.arena.presence.ratings.get(self.settings.game, player["name"])
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
        for ev in rc.decide(self.state, rc.LeaveSeat(session), self._now()):
            await self._free_seat(ev.seat)  # type: ignore[union-attr]
        await self.update_lobby()

    async def set_ready(self, session: str, ready: bool) -> None:
        for ev in rc.decide(self.state, rc.SetReady(session, ready), self._now()):
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
            await self.update_lobby()

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
