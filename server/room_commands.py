"""A room's commands and ``decide``, sans I/O: what a command asks, the events it causes
now, or its typed refusal (:mod:`server.room_state` applies the events).

``decide`` reads the state and never changes it; what it needs of the world (a
deal's seed, a player's rating) the caller draws first, so it stays pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.base import new_game
from protocol.errors import ErrorCode, ProtocolError
from server.room_state import (
    Event,
    Forfeit,
    GameStarted,
    MoveMade,
    Player,
    ReadyChanged,
    RematchOffered,
    RoomState,
    SeatFreed,
    SeatTaken,
)


@dataclass(frozen=True, slots=True)
class Move:
    session: str
    move: str


@dataclass(frozen=True, slots=True)
class Resign:
    session: str


@dataclass(frozen=True, slots=True)
class SetReady:
    session: str
    ready: bool


@dataclass(frozen=True, slots=True)
class OfferRematch:
    session: str
    accept: bool
    seed: int  # the next deal's, drawn by the caller (decide stays pure)


@dataclass(frozen=True, slots=True)
class TakeSeat:
    session: str
    player: Player  # with its rating in the room's game, looked up by the caller
    seat: int | None


@dataclass(frozen=True, slots=True)
class LeaveSeat:
    session: str


@dataclass(frozen=True, slots=True)
class Start:
    """Start a game if every seat is taken (and ready, unless ``require_ready`` is off)."""

    require_ready: bool
    seed: int


Command = Move | Resign | SetReady | OfferRematch | TakeSeat | LeaveSeat | Start


def decide(state: RoomState, cmd: Command, now_ms: int) -> list[Event]:
    """The events ``cmd`` causes now; a refusal raises its typed ``ProtocolError``."""
    return _DECIDE[type(cmd)](state, cmd, now_ms)


def seated(state: RoomState, session: str) -> int:
    seat = state.seat_of(session)
    if seat is None:
        if state.members.get(session) == "spectator":
            raise ProtocolError(ErrorCode.FORBIDDEN, "spectators cannot act in a game")
        raise ProtocolError(ErrorCode.NOT_SEATED, "you hold no seat in this room")
    return seat


def _decide_move(state: RoomState, cmd: Move, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.match is None:
        raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
    # the match refuses (out of turn, illegal, over) when it is applied, before any change
    return [MoveMade(seat, cmd.move, now_ms)]


def _decide_resign(state: RoomState, cmd: Resign, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.match is None:
        raise ProtocolError(ErrorCode.NOT_STARTED, "the game has not started")
    return [Forfeit(seat, "resign", now_ms)]


def _decide_ready(state: RoomState, cmd: SetReady, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    if state.playing:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "the game is already running")
    if state.match is not None:  # finished: the next game is a rematch (sides swapped)
        raise ProtocolError(
            ErrorCode.BAD_REQUEST, "the game is over: send offer_rematch for another"
        )
    st = state.seats[seat]
    assert st is not None
    return [] if st.ready == cmd.ready else [ReadyChanged(seat, cmd.ready)]


def _decide_rematch(state: RoomState, cmd: OfferRematch, now_ms: int) -> list[Event]:
    seat = seated(state, cmd.session)
    match = state.match
    if match is None or not match.over:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "no finished game to rematch")
    if cmd.accept and not state.rematch_offers:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "nobody has offered a rematch")
    events: list[Event] = []
    offers = set(state.rematch_offers)
    if seat not in offers:
        offers.add(seat)
        events.append(RematchOffered(seat))
    if rematch_completes(state, cmd.session):
        # seats rotate with the players: new seat i is the old seat i+1
        rotated = state.seats[1:] + state.seats[:1]
        game = match.rematch(seed=cmd.seed).game
        seats = tuple((st.session, st.player) for st in rotated if st is not None)
        events.append(GameStarted(state.game_number + 1, game, seats, now_ms))
    return events


def _decide_take_seat(state: RoomState, cmd: TakeSeat, now_ms: int) -> list[Event]:
    if state.members.get(cmd.session) != "player":
        raise ProtocolError(ErrorCode.FORBIDDEN, "join the room as a player first")
    if state.settings.rated and cmd.player.get("guest"):
        raise ProtocolError(ErrorCode.FORBIDDEN, "rated games need a claimed name (a token)")
    current = state.seat_of(cmd.session)
    seat = cmd.seat
    if current is not None and (seat is None or seat == current):
        return []
    if state.playing:
        raise ProtocolError(ErrorCode.FORBIDDEN, "the game is running")
    if seat is None:
        free = [i for i, s in enumerate(state.seats) if s is None]
        if not free:
            raise ProtocolError(ErrorCode.ROOM_FULL, "every seat is taken")
        seat = free[0]
    if seat >= len(state.seats):
        raise ProtocolError(ErrorCode.BAD_REQUEST, f"no seat {seat} in this room")
    if state.seats[seat] is not None:
        raise ProtocolError(ErrorCode.SEAT_OCCUPIED, f"seat {seat} is taken")
    events: list[Event] = [] if current is None else [SeatFreed(current)]
    return [*events, SeatTaken(seat, cmd.session, cmd.player)]


def _decide_leave_seat(state: RoomState, cmd: LeaveSeat, now_ms: int) -> list[Event]:
    seat = state.seat_of(cmd.session)
    if seat is None:
        raise ProtocolError(ErrorCode.NOT_SEATED, "you hold no seat here")
    if state.playing:
        raise ProtocolError(ErrorCode.FORBIDDEN, "the game is running: resign instead")
    return [SeatFreed(seat)]


def can_start(state: RoomState, require_ready: bool) -> bool:
    """Would :class:`Start` start a game now? (its deal is drawn only then)"""
    if state.playing or any(s is None for s in state.seats):
        return False
    return not require_ready or all(s.ready for s in state.seats if s is not None)


def rematch_completes(state: RoomState, session: str) -> bool:
    """Would this member's rematch offer (or acceptance) start the next game?"""
    seat = state.seat_of(session)
    if seat is None:
        return False
    return len(set(state.rematch_offers) | {seat}) == len(state.seats) and all(state.seats)


def _decide_start(state: RoomState, cmd: Start, now_ms: int) -> list[Event]:
    if not can_start(state, cmd.require_ready):
        return []
    s = state.settings
    game = new_game(
        s.game,
        rules=s.rules,
        variant=s.variant,
        seed=cmd.seed,
        players=s.seats,
        options=s.options or None,
    )
    seats = tuple((st.session, st.player) for st in state.seats if st is not None)
    return [GameStarted(state.game_number + 1, game, seats, now_ms)]


_DECIDE: dict[type, Any] = {
    Move: _decide_move,
    Resign: _decide_resign,
    SetReady: _decide_ready,
    OfferRematch: _decide_rematch,
    TakeSeat: _decide_take_seat,
    LeaveSeat: _decide_leave_seat,
    Start: _decide_start,
}
