"""One tournament game: participants seated at an :class:`engine.match.Match`.

The Match is the authority (the same one server rooms use): it judges every
move and keeps the clocks, which the runner measures here with a monotonic
clock. A participant's :class:`~clients.tournament.participants.Fault` loses it
the game (bots issue policy: crash, hang, garbage or an illegal move forfeits;
in a 3-4 player game it goes out and the others play on). With the solver as
adjudicator a two-player 4x4 Collapsi game ends as soon as the perfect solver
settles the position within a small budget: the side that loses with perfect
play forfeits with the reason ``adjudicated``.

The finished game is a JSON-able *line*: the Match's record (so
``engine.replay(GameRecord.from_dict(line))`` rebuilds the final position),
plus ``tournament``: its id, round, encounter, deal, seat order, faults and the
final position (what a replay must reach).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from clients.tournament.participants import (
    BuiltinParticipant,
    Fault,
    Participant,
    Resigned,
    Turn,
)
from engine.base import EngineError, Game, game_class
from engine.match import Match, TimeControl

#: solver positions spent on each adjudication attempt (a few ms in Python)
ADJUDICATION_NODES = 4_000
#: grace on top of the clock before an engine's silence counts as a hang (ms)
HANG_GRACE_MS = 1_000


class GameSpec(NamedTuple):
    """One game to play (a named tuple: immutable, and quick to make and to pickle, which
    a worker process making thousands of fast games a second notices)."""

    id: str
    round: int
    encounter: int
    deal: int
    perm: int
    seats: tuple[int, ...]  # participant index per seat
    game: str
    rules: str | None
    variant: str | None
    deal_seed: int | None
    setup: str | None
    tcs: tuple[str, ...]  # time control per seat (participants may have their own)
    move_timeout_ms: int
    adjudicate: str

    def new_game(self) -> Game:
        cls = game_class(self.game)
        if self.setup is not None:
            return cls.from_setup(
                self.setup, rules=self.rules, variant=self.variant, players=len(self.seats)
            )
        return cls.new(
            rules=self.rules,
            variant=self.variant,
            seed=self.deal_seed or 0,
            players=len(self.seats),
        )


def _now_ms(origin_ns: int) -> int:
    """Milliseconds since ``origin_ns`` (a :func:`time.monotonic_ns` reading)."""
    return (time.monotonic_ns() - origin_ns) // 1_000_000


def can_adjudicate(game: Game) -> bool:
    """Two-player 4x4 Collapsi without shifting or placing: what the solver settles."""
    return (
        game.name == "collapsi"
        and game.num_players == 2
        and game.variant == "base"
        and getattr(game, "width", 0) * getattr(game, "height", 0) == 16
    )


def solver_loser(game: Game) -> int | None:
    """The seat that loses with perfect play, if the solver settles it within budget."""
    from engine.collapsi.solver import SolverBudgetExceeded, solve_winner

    try:
        winner = solve_winner(game.to_position(), max_nodes=ADJUDICATION_NODES)  # type: ignore[attr-defined]
    except SolverBudgetExceeded:
        return None
    return 1 - winner


def _begin(spec: GameSpec, names: list[str]) -> tuple[Game, Match, list[TimeControl]]:
    """The game and its Match (the authority) with every seat's time control."""
    game = spec.new_game()
    tcs = [_tc(t) for t in spec.tcs]
    odds = len(set(spec.tcs)) > 1
    # a forfeit is a loss here even before every engine has moved (no Lichess-style abort)
    return game, Match(game, names, tcs[0], tcs if odds else None, abort_rule=False), tcs


_TCS: dict[str, TimeControl] = {}


def _tc(text: str) -> TimeControl:
    """Parsed once per text (it is the same for every game of a tournament)."""
    tc = _TCS.get(text)
    if tc is None:
        tc = _TCS[text] = TimeControl.parse(text)
    return tc


def _turn(match: Match, spec: GameSpec, tcs: list[TimeControl], seat: int, now: int) -> Turn:
    deadline = match.deadline_ms()
    wait = spec.move_timeout_ms if deadline is None else deadline - now + HANG_GRACE_MS
    return Turn(seat=seat, clocks=match.clocks(now), time_control=tcs[seat], wait_ms=max(1, wait))


def _adjudicated(match: Match, game: Game, now_ms: int) -> bool:
    """Ends the game if the solver settles it (see :func:`solver_loser`)."""
    loser = solver_loser(game)
    if loser is None:
        return False
    match.forfeit(loser, "adjudicated", now_ms)
    return True


def _line(
    spec: GameSpec,
    match: Match,
    faults: list[dict[str, Any]],
    adjudicated: bool,
    duration_ms: int,
) -> dict[str, Any]:
    line = match.record_dict()
    line["tournament"] = {
        "id": spec.id,
        "round": spec.round,
        "encounter": spec.encounter,
        "deal": spec.deal,
        "perm": spec.perm,
        "seats": list(spec.seats),
        "adjudicated": adjudicated,
        "faults": faults,
        "final_position": match.game.position(),
        "duration_ms": duration_ms,
    }
    return line


async def play_game(spec: GameSpec, players: list[Participant]) -> tuple[dict[str, Any], set[int]]:
    """Play ``spec`` with ``players`` (one per seat); the record line and the seats
    that faulted (their participants need a restart)."""
    game, match, tcs = _begin(spec, [p.name for p in players])
    faults: list[dict[str, Any]] = []
    adjudicated = False
    adjudicable = spec.adjudicate == "solver" and can_adjudicate(game)
    origin = time.monotonic_ns()
    for seat, p in enumerate(players):
        try:
            await p.new_game(game, seat)
        except Fault as fault:  # it cannot play this game: it loses it unplayed
            faults.append(_fault(seat, 0, fault.kind, fault.detail))
            match.forfeit(seat, "abandon", _now_ms(origin))
            break
    if not match.over:
        match.start(_now_ms(origin))
    while not match.over:
        seat = match.to_move()
        assert seat is not None
        if adjudicable and _adjudicated(match, game, _now_ms(origin)):
            adjudicated = True
            break
        turn = _turn(match, spec, tcs, seat, _now_ms(origin))
        move = ""
        try:
            move = await players[seat].choose(game, turn)
            match.submit_move(seat, move, _now_ms(origin))
        except Resigned:
            match.resign(seat, _now_ms(origin))
        except Fault as fault:
            faults.append(_fault(seat, len(game.history), fault.kind, fault.detail))
            reason = "timeout" if fault.kind == "timeout" else "abandon"
            match.forfeit(seat, reason, _now_ms(origin))
        except EngineError as exc:  # the Match refused the answer
            faults.append(_fault(seat, len(game.history), "illegal", f"{move!r}: {exc}"))
            match.forfeit(seat, "abandon", _now_ms(origin))
    assert match.result is not None
    for p in players:
        await p.game_over(match.result.winner, match.result.reason)
    return _line(spec, match, faults, adjudicated, _now_ms(origin)), {f["seat"] for f in faults}


def play_builtin_game(spec: GameSpec, players: list[BuiltinParticipant]) -> dict[str, Any]:
    """:func:`play_game` for built-in levels only, without the participant interface's
    awaits: the level's ``choose`` is called directly (what a worker process runs, so the
    runner's work per move stays small next to the game's). The same game, clocks and
    record line as :func:`play_game` gives them (built-in levels never fault, resign
    or need telling that a game begins or ends)."""
    game, match, tcs = _begin(spec, [p.name for p in players])
    faults: list[dict[str, Any]] = []
    adjudicated = False
    adjudicable = spec.adjudicate == "solver" and can_adjudicate(game)
    fixed = [p.fixed_player(tc) for p, tc in zip(players, tcs, strict=True)]  # None: clocked
    clock = time.monotonic_ns
    origin = clock()
    match.start(0)
    while not match.over:
        seat = game.to_move()
        assert seat is not None
        if adjudicable and _adjudicated(match, game, _now_ms(origin)):
            adjudicated = True
            break
        player = fixed[seat] or players[seat].player_for(
            _turn(match, spec, tcs, seat, _now_ms(origin))
        )
        move = ""
        try:
            move = player.choose(game)
            match.submit_move(seat, move, (clock() - origin) // 1_000_000)  # _now_ms inline
        except EngineError as exc:  # the Match refused the answer (a bug in a level)
            faults.append(_fault(seat, len(game.history), "illegal", f"{move!r}: {exc}"))
            match.forfeit(seat, "abandon", _now_ms(origin))
    return _line(spec, match, faults, adjudicated, _now_ms(origin))


def _fault(seat: int, ply: int, kind: str, detail: str) -> dict[str, Any]:
    return {"seat": seat, "ply": ply, "kind": kind, "detail": detail[:200]}
