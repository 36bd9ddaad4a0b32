"""The match authority: one game between seated players, with clocks, sans I/O.

A :class:`Match` decides everything about a game in progress: whose turn it
is, whether a move is legal (through the engine), how much time each player
has, and how the game ends (the board, resignation, time, abandonment, abort).
It never reads a clock or sleeps: every call takes the current time ``now_ms``
and returns the events it produced (JSON-able dicts), so the network room and
the local tournament runner drive the very same authority, and tests run it
with made-up times. The caller arms a timer for :meth:`Match.deadline_ms` and
calls :meth:`Match.check_time` when it fires.

Pure Python: no I/O, no asyncio, no imports outside the engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.base import EngineError, Game, GameOver, GameRecord, Result, new_game


class NotYourTurn(EngineError):
    """A seated player moved while another seat is to move."""

    code = "not_your_turn"


class NotSeated(EngineError):
    """The seat does not exist in this match (spectators have no seat)."""

    code = "not_seated"


class TooLateToAbort(EngineError):
    """An abort asked for once every player in the game has moved (resign instead)."""

    code = "forbidden"


class BadTimeControl(EngineError):
    code = "bad_time_control"


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``fischer``: ``base_ms`` each, ``increment_ms`` added after every move;
    ``fixed``: ``per_move_ms`` for every move, unused time is lost; ``none``."""

    kind: str = "none"
    base_ms: int = 0
    increment_ms: int = 0
    per_move_ms: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("none", "fischer", "fixed"):
            raise BadTimeControl(f"unknown time control kind {self.kind!r}")
        if min(self.base_ms, self.increment_ms, self.per_move_ms) < 0:
            raise BadTimeControl("times cannot be negative")
        if self.kind == "fischer" and self.base_ms <= 0:
            raise BadTimeControl("a Fischer clock needs a positive base time")
        if self.kind == "fixed" and self.per_move_ms <= 0:
            raise BadTimeControl("a fixed clock needs a positive time per move")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``"none"``, ``"5+3"`` (minutes + seconds, Fischer), ``"fixed:10"`` (seconds per move).

        Fractions are allowed (``"0.5+0"``), so tests can use short clocks.
        """
        text = text.strip().lower()
        if text in ("", "none", "-"):
            return cls()
        if m := re.fullmatch(r"fixed:(\d+(?:\.\d+)?)", text):
            return cls("fixed", per_move_ms=round(float(m[1]) * 1000))
        if m := re.fullmatch(r"(\d+(?:\.\d+)?)\+(\d+(?:\.\d+)?)", text):
            return cls(
                "fischer",
                base_ms=round(float(m[1]) * 60_000),
                increment_ms=round(float(m[2]) * 1000),
            )
        raise BadTimeControl(f"cannot read time control {text!r}: use none, 5+3 or fixed:10")

    def label(self) -> str:
        if self.kind == "fischer":
            return f"{_num(self.base_ms / 60_000)}+{_num(self.increment_ms / 1000)}"
        if self.kind == "fixed":
            return f"fixed:{_num(self.per_move_ms / 1000)}"
        return "none"

    def initial_ms(self) -> int | None:
        return {"fischer": self.base_ms, "fixed": self.per_move_ms}.get(self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "base_ms": self.base_ms,
            "increment_ms": self.increment_ms,
            "per_move_ms": self.per_move_ms,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeControl:
        return cls(
            kind=data.get("kind", "none"),
            base_ms=int(data.get("base_ms", 0)),
            increment_ms=int(data.get("increment_ms", 0)),
            per_move_ms=int(data.get("per_move_ms", 0)),
        )


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


class Match:
    """One game, its seats and clocks; see the module docstring.

    Events returned (all JSON-able): ``{"type": "start", ...}``,
    ``{"type": "move", "seat", "move", "ply", "clocks", "to_move"}``,
    ``{"type": "eliminated", "seat", "reason", "ply", "clocks", "to_move"}`` (a player
    of three or more forfeited and the others play on) and
    ``{"type": "game_over", "result", "clocks"}``. ``clocks`` are remaining
    milliseconds per seat (``None`` without a time control).
    """

    def __init__(
        self,
        game: Game,
        players: list[str],
        time_control: TimeControl | None = None,
        seat_time_controls: list[TimeControl] | None = None,
        abort_rule: bool = True,
    ):
        if len(players) != game.num_players:
            raise NotSeated(f"{game.num_players} players needed, {len(players)} given")
        self.game = game
        self.players = list(players)
        self.time_control = time_control or TimeControl()
        #: time odds (a tournament's participants with clocks of their own): one setting
        #: per seat, all with a clock or none; ``time_control`` is then the first seat's
        self.seat_time_controls: list[TimeControl] | None = None
        if seat_time_controls is not None:
            if len(seat_time_controls) != len(players):
                raise BadTimeControl("one time control per seat")
            if len({tc.kind == "none" for tc in seat_time_controls}) > 1:
                raise BadTimeControl("either every seat has a clock or none has")
            self.seat_time_controls = list(seat_time_controls)
            self.time_control = seat_time_controls[0]
        self.result: Result | None = None
        self.started = False
        self.start_ms: int | None = None
        self.end_ms: int | None = None
        initials = [tc.initial_ms() for tc in self._seat_tcs()]
        self._clocks: list[int] | None = None if initials[0] is None else initials  # type: ignore[assignment]
        self._turn_started_ms = 0
        self.move_times_ms: list[int] = []
        #: the seats that have made a move: until each one in the game has, a forfeit
        #: aborts the game (no winner, unrated: the Lichess convention)
        self.movers: set[int] = set()
        #: off for engine tournaments: there a forfeit is a loss whenever it comes (an
        #: engine that crashes before its first move loses, as in fastchess)
        self.abort_rule = abort_rule

    @classmethod
    def new(
        cls,
        game: str,
        players: list[str],
        rules: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        options: dict[str, Any] | None = None,
        time_control: TimeControl | None = None,
    ) -> Match:
        g = new_game(
            game, rules=rules, variant=variant, seed=seed, players=len(players), options=options
        )
        return cls(g, players, time_control)

    # -- state ----------------------------------------------------------------------
    @property
    def num_seats(self) -> int:
        return len(self.players)

    @property
    def over(self) -> bool:
        return self.result is not None

    def to_move(self) -> int | None:
        return None if self.over or not self.started else self.game.to_move()

    def clocks(self, now_ms: int | None = None) -> list[int] | None:
        """Remaining time per seat; with ``now_ms`` the mover's running clock is counted down."""
        if self._clocks is None:
            return None
        out = list(self._clocks)
        mover = self.to_move()
        if now_ms is not None and mover is not None:
            out[mover] = max(0, out[mover] - (now_ms - self._turn_started_ms))
        return out

    def deadline_ms(self) -> int | None:
        """When the player to move runs out of time; None if no clock is running."""
        mover = self.to_move()
        if self._clocks is None or mover is None:
            return None
        return self._turn_started_ms + self._clocks[mover]

    # -- commands ---------------------------------------------------------------------
    def start(self, now_ms: int) -> list[dict[str, Any]]:
        """Start the clocks (the first player's clock runs from now)."""
        if self.started:
            raise GameOver("the match has already started")
        self.started = True
        self.start_ms = now_ms
        self._turn_started_ms = now_ms
        events: list[dict[str, Any]] = [
            {
                "type": "start",
                "players": list(self.players),
                "clocks": self.clocks(),
                "to_move": self.game.to_move(),
                "time_control": self.time_control.to_dict(),
            }
        ]
        if self.game.is_over():  # a deal nobody can move in
            events += self._finish(self.game.result(), now_ms)  # type: ignore[arg-type]
        return events

    def check_time(self, now_ms: int) -> list[dict[str, Any]]:
        """End the game if the player to move has run out of time."""
        mover = self.to_move()
        deadline = self.deadline_ms()
        if mover is None or deadline is None or now_ms < deadline:
            return []
        return self._forfeit_at(mover, "timeout", now_ms)

    def submit_move(self, seat: int, move: str, now_ms: int) -> list[dict[str, Any]]:
        """Play ``move`` for ``seat``.

        Raises :class:`NotSeated`, :class:`GameOver`, :class:`NotYourTurn`, or the
        engine's :class:`IllegalMove`/:class:`NotationError`; nothing changes then.
        If the mover's time ran out before the move arrived, the move is not
        played and the returned events end the game by ``timeout``.
        """
        self._check_seat(seat)
        if self.over:
            raise GameOver("the game is over")
        if not self.started:
            raise NotYourTurn("the game has not started")
        if (flag := self.check_time(now_ms)) != []:
            return flag
        if seat in self.game.eliminated():
            raise GameOver("you are out of this game")
        if self.game.to_move() != seat:
            raise NotYourTurn(f"it is {self.players[self.game.to_move()]}'s turn")  # type: ignore[index]
        self.game.play(move)  # raises IllegalMove / NotationError before any change
        self.movers.add(seat)
        elapsed = now_ms - self._turn_started_ms
        self.move_times_ms.append(elapsed)
        tc = self._tc(seat)
        if self._clocks is not None:
            if tc.kind == "fischer":
                self._clocks[seat] = self._clocks[seat] - elapsed + tc.increment_ms
            else:  # fixed: a fresh allowance every move
                self._clocks[seat] = tc.per_move_ms
        self._turn_started_ms = now_ms
        history = self.game.history  # (a list made on each call: once per move)
        events: list[dict[str, Any]] = [
            {
                "type": "move",
                "seat": seat,
                "move": history[-1],
                "ply": len(history),
                "clocks": self.clocks(),
                "to_move": self.game.to_move(),
            }
        ]
        if (result := self.game.result()) is not None:
            events += self._finish(result, now_ms)
        return events

    def resign(self, seat: int, now_ms: int) -> list[dict[str, Any]]:
        return self._forfeit_command(seat, "resign", now_ms)

    def abandon(self, seat: int, now_ms: int) -> list[dict[str, Any]]:
        """The seat left and did not come back within the room's grace period."""
        return self._forfeit_command(seat, "abandon", now_ms)

    def forfeit(self, seat: int, reason: str, now_ms: int) -> list[dict[str, Any]]:
        """``seat`` loses by ``reason`` (resign, abandon, timeout) at ``now_ms``, as
        :meth:`resign` does; ``timeout`` zeroes the clock (restoring a logged game)."""
        if reason == "timeout":
            self._check_seat(seat)
            if self.over:
                raise GameOver("the game is over")
            if seat in self.game.eliminated():
                return []
            return self._forfeit_at(seat, "timeout", now_ms)
        return self._forfeit_command(seat, reason, now_ms)

    def abort(self, now_ms: int, reason: str = "aborted") -> list[dict[str, Any]]:
        """End without a winner (server shutdown, a game nobody started)."""
        if self.over:
            return []
        return self._finish(Result(None, tuple(range(self.num_seats)), reason), now_ms)

    def abortable(self) -> bool:
        """True until every seat still in the game has made a move: a game that ends
        before then (resign, leave, abandonment, time-out) is aborted, and any player may
        abort it (:meth:`abort_by`)."""
        if self.over or not self.abort_rule:
            return False
        out = self.game.eliminated()
        return any(s not in self.movers and s not in out for s in range(self.num_seats))

    def abort_by(self, seat: int, now_ms: int) -> list[dict[str, Any]]:
        """``seat`` aborts the game: allowed while :meth:`abortable`."""
        self._check_seat(seat)
        if self.over:
            raise GameOver("the game is over")
        if not self.abortable():
            raise TooLateToAbort("every player has moved: resign instead")
        return self.abort(now_ms)

    def rematch(self, seed: int) -> Match:
        """A new match on a fresh deal with sides swapped (seats rotated by one)."""
        players = self.players[1:] + self.players[:1]
        g = type(self.game).new(
            rules=self.game.rules,
            variant=self.game.variant,
            seed=seed,
            players=len(players),
            options=self.game.options() or None,
        )
        tcs = self.seat_time_controls
        return Match(g, players, self.time_control, tcs[1:] + tcs[:1] if tcs else None)

    def record(self) -> GameRecord:
        rec = self.game.record(players=self.players, result=self.result)
        rec.options = {**rec.options}
        return rec

    def record_dict(self) -> dict[str, Any]:
        """The record plus the clock settings and move times (for review)."""
        out = self.record().to_dict()
        out["time_control"] = self.time_control.to_dict()
        if self.seat_time_controls is not None:
            out["seat_time_controls"] = [tc.to_dict() for tc in self.seat_time_controls]
        out["move_times_ms"] = list(self.move_times_ms)
        return out

    # -- internals ----------------------------------------------------------------------
    def _seat_tcs(self) -> list[TimeControl]:
        return self.seat_time_controls or [self.time_control] * len(self.players)

    def _tc(self, seat: int) -> TimeControl:
        return self.seat_time_controls[seat] if self.seat_time_controls else self.time_control

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < self.num_seats:
            raise NotSeated(f"no seat {seat!r} in this match")

    def _forfeit_command(self, seat: int, reason: str, now_ms: int) -> list[dict[str, Any]]:
        self._check_seat(seat)
        if self.over:
            raise GameOver("the game is over")
        if seat in self.game.eliminated():
            return []  # out already (ruling 3): leaving or resigning changes nothing
        if not self.started:
            if self.abort_rule:
                return self.abort(now_ms)
            return self._finish(Result.forfeit(seat, self.num_seats, reason), now_ms)
        # time running out before the resignation arrived still counts as time
        flag = self.check_time(now_ms)
        if self.over or seat in self.game.eliminated():
            return flag
        return flag + self._forfeit_at(seat, reason, now_ms)

    def _forfeit_at(self, seat: int, reason: str, now_ms: int) -> list[dict[str, Any]]:
        """``seat`` (in the game, started) forfeits now: with two others or more still
        in, they are out and the game goes on (ruling 3); else the game ends."""
        mover = self.to_move()
        out = self.game.eliminated()
        alive = [s for s in range(self.num_seats) if s not in out]
        ends = len(alive) < 3 or not self.game.eliminations
        if self._clocks is not None and mover is not None and (ends or mover == seat):
            # the mover's clock stops: the game ends, or the turn passes on
            if reason == "timeout" and mover == seat:
                self._clocks[seat] = 0
            elif self._tc(mover).kind == "fischer":
                self._clocks[mover] -= now_ms - self._turn_started_ms
        if ends and self.abortable():
            return self.abort(now_ms)  # before every player's first move: no result
        if ends:
            # ranked by elimination time: the forfeiting seat after those still in,
            # ahead of those out before (ruling 3)
            result = Result.forfeit(seat, self.num_seats, reason, alive=alive, out=out)
            return self._finish(result, now_ms)
        self.game.eliminate(seat, reason)
        if mover == seat:  # the turn passes on: the next mover's clock runs from now
            self._turn_started_ms = now_ms
        events: list[dict[str, Any]] = [
            {
                "type": "eliminated",
                "seat": seat,
                "reason": reason,
                "ply": len(self.game.history),
                "clocks": self.clocks(now_ms),
                "to_move": self.game.to_move(),
            }
        ]
        if (result := self.game.result()) is not None:  # the next one had no move
            events += self._finish(result, now_ms)
        return events

    def _finish(self, result: Result, now_ms: int) -> list[dict[str, Any]]:
        self.result = result
        self.end_ms = now_ms
        return [{"type": "game_over", "result": result.to_dict(), "clocks": self.clocks()}]
