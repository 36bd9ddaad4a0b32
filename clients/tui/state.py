"""One room as the full-screen client knows it, built from the server's snapshot and
room events (or from a local :class:`engine.match.Match`): no widgets here, so the
screens only draw it and the tests can read it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from clients.gameview import LocalClock, format_ms, seat_name
from engine.base import EngineError, new_game

#: board geometries by (game, variant, seats): RoomModel.board_shape
_SHAPES: dict[tuple[str, str, int], dict[str, Any]] = {}


@dataclass
class Seat:
    """A seat as shown in the side panel."""

    label: str
    name: str | None = None
    rating: float | None = None
    connected: bool = True
    grace_until: float | None = None  # monotonic time a dropped player's grace ends
    out: bool = False


@dataclass
class RoomModel:
    """Everything the game screen shows of one room."""

    room: str
    game: str = "collapsi"
    variant: str = "base"
    rated: bool = False
    status: str = "waiting"
    invite: str | None = None
    seats: list[Seat] = field(default_factory=list)
    you: int | None = None
    spectator: bool = False
    spectators: int = 0
    view: dict[str, Any] | None = None
    to_move: int | None = None
    legal: list[str] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)  # "3. ann (red) 14"
    chat: list[str] = field(default_factory=list)
    clock: LocalClock = field(default_factory=LocalClock)
    last_path: list[int] = field(default_factory=list)
    banner: str | None = None  # the game-over text
    result: Any = None
    record: str | None = None
    rematch: list[int] = field(default_factory=list)
    game_number: int = 0
    note: str = ""  # connection state: reconnecting, caught up...
    seq: int = 0
    me: str | None = None  # this client's player name (its seat is found by it)
    local: bool = False  # played on this computer (no server, no spectators)
    detail: str = ""  # what the game is, when the room line does not say it (a puzzle)

    # -- from the server ----------------------------------------------------------------------
    def snapshot(self, state: Any) -> None:
        """A ``room_state``: the whole room (a game may be half played)."""
        self.game, self.variant, self.rated = state.game, state.variant, state.rated
        self.status, self.invite = state.status, state.invite
        self._seats(state.seats)
        self.you = state.you
        self.spectator = state.role == "spectator"
        self.spectators = state.spectators
        self.game_number = state.game_number
        self.rematch = list(state.rematch)
        self.seq = max(self.seq, state.seq)
        if state.view is not None:
            self.view = dict(state.view)
            self.to_move, self.legal = state.to_move, list(state.legal_moves)
            self.clock.update(state.clock)
            if not self.moves:
                self.moves = [f"{i + 1}. {mv}" for i, mv in enumerate(state.history)]
        if state.status == "finished" and state.result is not None:
            self._over(state.result, [], state.record)

    def apply(self, ev: Any) -> None:
        """One room event, in seq order."""
        seq = getattr(ev, "seq", None)
        if seq is not None:
            if seq <= self.seq:
                return  # in the snapshot already
            self.seq = seq
        kind = ev.type
        if kind == "seat_taken":
            self._grow(ev.seat)
            if self.me is not None and ev.player.name == self.me and not self.spectator:
                self.you = ev.seat
            self.seats[ev.seat].name = ev.player.name
            self.seats[ev.seat].rating = ev.player.rating
        elif kind == "seat_freed":
            self._grow(ev.seat)
            self.seats[ev.seat].name = None
        elif kind == "game_started":
            self._seats(ev.seats)
            if self.me is not None and not self.spectator:
                names = [s.name for s in self.seats]
                self.you = names.index(self.me) if self.me in names else self.you
            self.status, self.game_number = "playing", ev.game_number
            self.moves, self.last_path, self.banner, self.result = [], [], None, None
            self.rematch = []
            self._turn(ev)
        elif kind == "move_made":
            paths = (self.view or {}).get("paths") or {}
            self.last_path = list(paths.get(ev.move) or [])
            self.moves.append(f"{ev.ply}. {self.who(ev.seat)} {ev.move}")
            self._turn(ev)
        elif kind == "player_eliminated":
            self._grow(ev.seat)
            self.seats[ev.seat].out = True
            self.moves.append(f"   {self.who(ev.seat)} out ({ev.reason})")
            self._turn(ev)
        elif kind == "clock_update":
            self.clock.update(ev.clock)
        elif kind == "game_over":
            self._over(ev.result, ev.ratings, ev.record)
        elif kind == "chat_message":
            self.chat.append(f"{'(watching) ' if ev.spectator else ''}{ev.name}: {ev.text}")
        elif kind == "player_disconnected" and ev.seat is not None:
            self._grow(ev.seat)
            self.seats[ev.seat].connected = False
            self.seats[ev.seat].grace_until = time.monotonic() + ev.grace_ms / 1000
        elif kind == "player_reconnected" and ev.seat is not None:
            self._grow(ev.seat)
            self.seats[ev.seat].connected, self.seats[ev.seat].grace_until = True, None
        elif kind == "rematch_offered":
            self.rematch.append(ev.seat)
        elif kind == "spectators":  # (no seq: a notice, not a logged event)
            self.spectators = ev.count
        elif kind == "room_closed":
            self.banner = f"room closed ({ev.reason})"

    # -- helpers ------------------------------------------------------------------------------
    def board_shape(self) -> dict[str, Any]:
        """The board's geometry before the deal (the game's view without its cards' values:
        the board widget's size), from a game made by the engine with these settings."""
        key = (self.game, self.variant, len(self.seats))
        if key not in _SHAPES:
            try:
                view = new_game(
                    self.game, variant=self.variant, players=len(self.seats) or None
                ).view()
            except (EngineError, ValueError, KeyError):
                view = {}
            _SHAPES[key] = {
                k: view[k] for k in ("game", "width", "cards", "collected") if k in view
            }
        return _SHAPES[key]

    def who(self, seat: int | None) -> str:
        """``ann (red)``."""
        if seat is None or seat >= len(self.seats):
            return "nobody"
        s = self.seats[seat]
        return f"{s.name or '(empty)'} ({s.label})"

    @property
    def my_turn(self) -> bool:
        return (
            self.you is not None
            and not self.spectator
            and self.status == "playing"
            and self.to_move == self.you
            and bool(self.legal)
        )

    def _seats(self, infos: list[Any]) -> None:
        old = {s.label: s for s in self.seats}
        self.seats = []
        for info in infos:
            prev = old.get(info.label)
            seat = Seat(label=info.label)
            if info.player is not None:
                seat.name, seat.rating = info.player.name, info.player.rating
            seat.connected = info.connected
            if prev is not None and not info.connected:
                seat.grace_until = prev.grace_until
            self.seats.append(seat)

    def _grow(self, seat: int) -> None:
        while len(self.seats) <= seat:
            self.seats.append(Seat(label=f"seat {len(self.seats)}"))

    def _turn(self, ev: Any) -> None:
        self.view = dict(ev.view)
        self.to_move, self.legal = ev.to_move, list(ev.legal_moves)
        self.clock.update(ev.clock)
        for i, s in enumerate(self.seats):
            s.out = i in (self.view.get("eliminated") or [])

    def _over(self, result: Any, ratings: list[Any], record: str | None) -> None:
        self.status, self.result, self.record = "finished", result, record
        self.legal, self.to_move = [], None
        self.clock.stop()
        if result.reason == "aborted":
            text = "Game aborted: no winner, unrated"
        elif result.winner is None:
            text = f"Game over: no winner ({result.reason})"
        else:
            text = f"Game over: {self.who(result.winner)} wins ({result.reason})"
        if result.scores:
            text += " - scores " + ", ".join(map(str, result.scores))
        for c in ratings:
            text += f"\n{c.name}: {c.before:.0f} -> {c.after:.0f} ({c.after - c.before:+.0f})"
        self.banner = text

    def seat_lines(self) -> list[str]:
        """The side panel's players: name, colour, rating, state, clock."""
        clocks = self.clock.now() if self.clock.remaining else []
        out = []
        for i, s in enumerate(self.seats):
            parts = [(">" if i == self.to_move else " ") + (s.name or "(empty)")]
            parts.append(f"({s.label})")
            if s.rating is not None:
                parts.append(f"{s.rating:.0f}")
            if i == self.you:
                parts.append("(you)")
            if s.out:
                parts.append("out")
            if not s.connected:
                left = max(0.0, (s.grace_until or time.monotonic()) - time.monotonic())
                parts.append(f"disconnected, {left:.0f}s")
            if i < len(clocks):
                parts.append(format_ms(clocks[i]))
            out.append(" ".join(parts))
        return out


__all__ = ["RoomModel", "Seat", "seat_name"]
