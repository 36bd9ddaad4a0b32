"""The match authority (engine/match.py): turns, legality, clocks, endings, rematch.

A tiny subtraction game stands in for the real games here so each rule of the
authority is checked in isolation; the server's end-to-end tests use the real
Collapsi and Collecto engines through the same authority.
"""

from __future__ import annotations

from typing import Any, Self

import pytest

from engine.base import Game, GameOver, IllegalMove, NotationError, Result
from engine.match import BadTimeControl, Match, NotSeated, NotYourTurn, TimeControl


class Pile(Game):
    """Players take 1 or 2 from a pile in turn; whoever cannot move loses."""

    name = "pile-test"
    rule_sets = ("default",)
    variants = ("default",)

    def __init__(self, size: int, players: int, seed: int | None) -> None:
        self._size = size
        self._left = size
        self._players = players
        self._seed = seed
        self._history: list[str] = []

    @classmethod
    def new(cls, rules=None, variant=None, seed=0, players=None, options=None) -> Self:
        return cls(5 + seed % 3, players or 2, seed)

    @classmethod
    def from_setup(cls, setup, rules=None, variant=None, players=None, options=None, seed=None):
        return cls(int(setup), players or 2, seed)

    rules = property(lambda self: "default")
    rules_version = property(lambda self: "1")
    variant = property(lambda self: "default")
    seed = property(lambda self: self._seed)
    num_players = property(lambda self: self._players)
    history = property(lambda self: list(self._history))

    def seat_names(self) -> list[str]:
        return [f"p{i}" for i in range(self._players)]

    def to_move(self) -> int | None:
        return None if self.result() else len(self._history) % self._players

    def legal_moves(self) -> list[str]:
        return [m for m in ("1", "2") if int(m) <= self._left] if self._left else []

    def play(self, move: str) -> None:
        if self.result():
            raise GameOver("over")
        if move not in ("1", "2"):
            raise NotationError(f"bad move {move!r}")
        if move not in self.legal_moves():
            raise IllegalMove(f"only {self._left} left")
        self._left -= int(move)
        self._history.append(move)

    def result(self) -> Result | None:
        if self._left:
            return None
        loser = len(self._history) % self._players
        return Result.forfeit(loser, self._players, "no_moves")

    def setup(self) -> str:
        return str(self._size)

    def position(self) -> str:
        return str(self._left)

    def render(self) -> str:
        return "o" * self._left

    def snapshot(self) -> dict[str, Any]:
        return {"size": self._size, "moves": self._history}

    @classmethod
    def restore(cls, data):  # pragma: no cover - unused here
        raise NotImplementedError

    def copy(self):  # pragma: no cover - unused here
        raise NotImplementedError


def match(tc: str = "none", players: int = 2, size: int = 5) -> Match:
    m = Match(Pile(size, players, 0), [f"n{i}" for i in range(players)], TimeControl.parse(tc))
    m.start(1000)
    return m


def test_time_control_parse_and_label() -> None:
    assert TimeControl.parse("none").kind == "none"
    tc = TimeControl.parse("5+3")
    assert (tc.kind, tc.base_ms, tc.increment_ms) == ("fischer", 300_000, 3000)
    assert tc.label() == "5+3"
    assert TimeControl.parse("fixed:10") == TimeControl("fixed", per_move_ms=10_000)
    assert TimeControl.parse("0.01+0").base_ms == 600
    assert TimeControl.from_dict(tc.to_dict()) == tc
    for bad in ("5", "fixed:", "abc", "0+1"):
        with pytest.raises(BadTimeControl):
            TimeControl.parse(bad)


def test_moves_alternate_and_the_engine_decides_legality() -> None:
    m = match()
    with pytest.raises(NotYourTurn):
        m.submit_move(1, "1", 1100)
    with pytest.raises(NotationError):
        m.submit_move(0, "3", 1100)
    with pytest.raises(NotSeated):
        m.submit_move(2, "1", 1100)
    events = m.submit_move(0, "2", 1100)
    assert events == [
        {"type": "move", "seat": 0, "move": "2", "ply": 1, "clocks": None, "to_move": 1}
    ]
    m.submit_move(1, "2", 1200)
    with pytest.raises(IllegalMove):
        m.submit_move(0, "2", 1300)  # one left
    assert m.game.position() == "1"  # a refused move changes nothing
    events = m.submit_move(0, "1", 1300)
    assert [e["type"] for e in events] == ["move", "game_over"]
    assert events[1]["result"] == {
        "winner": 0,
        "order": [0, 1],
        "reason": "no_moves",
        "scores": None,
    }
    with pytest.raises(GameOver):
        m.submit_move(1, "1", 1400)
    rec = m.record()
    assert rec.moves == ["2", "2", "1"] and rec.players == ["n0", "n1"]
    assert rec.result == m.result


def test_no_move_before_start() -> None:
    m = Match(Pile(5, 2, 0), ["a", "b"])
    with pytest.raises(NotYourTurn):
        m.submit_move(0, "1", 0)


def test_fischer_clock_counts_down_and_adds_increment() -> None:
    m = match("0.1+2")  # 6 s + 2 s
    assert m.clocks() == [6000, 6000]
    assert m.deadline_ms() == 7000
    m.submit_move(0, "1", 2500)  # 1.5 s used
    assert m.clocks() == [6500, 6000]
    assert m.clocks(now_ms=3500) == [6500, 5000]
    assert m.deadline_ms() == 8500
    assert m.check_time(8499) == []
    events = m.check_time(8500)
    assert events[0]["type"] == "game_over"
    # seat 1's flag fell before its first move: aborted, no result (the Lichess convention)
    assert m.result == Result(None, (0, 1), "aborted")
    assert events[0]["clocks"] == [6500, 0]


def test_a_move_after_the_flag_fell_is_not_played() -> None:
    m = match("fixed:1")
    events = m.submit_move(0, "1", 2000)  # exactly at the deadline: too late
    assert [e["type"] for e in events] == ["game_over"]
    assert m.result.reason == "aborted" and m.result.winner is None  # no move made yet
    assert m.game.history == []
    m = match("fixed:1")
    m.submit_move(0, "1", 1100)
    m.submit_move(1, "1", 1200)
    events = m.submit_move(0, "1", 2200)  # once both have moved, a flag fall is a loss
    assert [e["type"] for e in events] == ["game_over"]
    assert m.result.reason == "timeout" and m.result.winner == 1


def test_fixed_time_per_move_does_not_accumulate() -> None:
    m = match("fixed:1")
    m.submit_move(0, "1", 1100)
    m.submit_move(1, "1", 1200)
    assert m.clocks() == [1000, 1000]
    assert m.deadline_ms() == 2200


def test_resign_and_abandon_in_two_and_three_player_games() -> None:
    m = match()
    m.submit_move(0, "1", 1100)
    m.submit_move(1, "1", 1150)
    events = m.resign(0, 1200)  # resigning out of turn is allowed
    assert events[0]["result"]["reason"] == "resign"
    assert m.result.winner == 1
    with pytest.raises(GameOver):
        m.resign(1, 1300)
    m3 = match(players=3)
    for seat in range(3):
        m3.submit_move(seat, "1", 1100 + seat)
    m3.abandon(1, 1500)
    assert m3.result == Result(0, (0, 2, 1), "abandon")


def test_abort_has_no_winner() -> None:
    m = match()
    assert m.abort(2000)[0]["result"]["winner"] is None
    assert m.abort(2001) == []


def test_rematch_swaps_sides_on_a_fresh_deal() -> None:
    m = match("1+0")
    m.resign(0, 1500)
    r = m.rematch(seed=1)
    assert r.players == ["n1", "n0"]
    assert r.time_control == m.time_control
    assert not r.started and r.result is None
    assert r.game.setup() == "6"
    m3 = match(players=3)
    assert m3.rematch(seed=2).players == ["n1", "n2", "n0"]


# -- forfeits in 3-4 player Collapsi (ruling 3: out by elimination, the others play on) --


def big_board(
    players: int = 3, seed: int = 1, tc: str = "0.1+1", options: dict | None = None
) -> Match:
    m = Match.new(
        "collapsi",
        [f"n{i}" for i in range(players)],
        variant="big-board",
        seed=seed,
        time_control=TimeControl.parse(tc),
        options=options,
    )
    m.start(1000)
    return m


def same_as_rebuilt(m: Match) -> None:
    """The game after forfeits is exactly the one its position describes (legal moves too:
    the card a forfeiting player stood on is free to end on)."""
    g = m.game
    again = type(g).from_setup(g.position(), variant=g.variant, players=g.num_players)
    assert again.legal_moves() == g.legal_moves()
    assert again.to_move() == g.to_move()


def play_until_eliminated(m: Match, rng_seed: int, now: int) -> int:
    """Random moves until someone is out by having no move; returns the time reached."""
    import random

    rng = random.Random(rng_seed)
    while not m.game.eliminated() and not m.over:
        now += 10
        m.submit_move(m.to_move(), rng.choice(m.game.legal_moves()), now)
    return now


def test_the_mover_resigning_in_a_three_player_game_is_out_and_the_turn_passes() -> None:
    m = big_board()
    assert m.to_move() == 0
    events = m.resign(0, 1400)
    assert events == [
        {
            "type": "eliminated",
            "seat": 0,
            "reason": "resign",
            "ply": 0,
            "clocks": [5600, 6000, 6000],  # seat 0 spent 0.4 s; seat 1's clock runs now
            "to_move": 1,
        }
    ]
    assert not m.over and m.to_move() == 1 and m.game.eliminated() == [0]
    assert m.deadline_ms() == 1400 + 6000
    same_as_rebuilt(m)
    # out is out: moving, resigning or abandoning again changes nothing
    with pytest.raises(GameOver):
        m.submit_move(0, m.game.legal_moves()[0], 1500)
    assert m.resign(0, 1500) == [] and m.abandon(0, 1500) == []
    assert m.game.eliminated() == [0] and not m.over
    # seat 1 (not to move) resigns once seats 1 and 2 have moved: seat 2 wins
    m.submit_move(1, m.game.legal_moves()[0], 1600)
    m.submit_move(2, m.game.legal_moves()[0], 1650)
    events = m.resign(1, 1700)
    assert events[-1]["type"] == "game_over"
    assert m.result == Result(2, (2, 1, 0), "resign")


def test_a_forfeit_out_of_turn_keeps_the_turn_and_the_movers_clock() -> None:
    m = big_board(players=4, seed=3)
    m.submit_move(0, m.game.legal_moves()[0], 1500)  # 0.5 s + 1 s increment
    events = m.abandon(3, 2000)
    assert [e["type"] for e in events] == ["eliminated"]
    # seat 1's clock has run 0.5 s of its turn and keeps running
    assert events[0]["clocks"] == [6500, 5500, 6000, 6000] and events[0]["to_move"] == 1
    assert m.deadline_ms() == 1500 + 6000
    same_as_rebuilt(m)


def test_a_timeout_in_a_three_player_game_is_an_elimination() -> None:
    m = big_board()
    assert m.check_time(6999) == []
    events = m.check_time(7000)
    assert events[0]["type"] == "eliminated" and events[0]["reason"] == "timeout"
    assert events[0]["clocks"] == [0, 6000, 6000] and events[0]["to_move"] == 1
    assert m.deadline_ms() == 7000 + 6000 and not m.over
    # the next flag with two players in (both have moved) ends the game: order by
    # elimination time
    m.submit_move(1, m.game.legal_moves()[0], 7000)
    m.submit_move(2, m.game.legal_moves()[0], 7000)
    m.check_time(m.deadline_ms())  # type: ignore[arg-type]
    assert m.result == Result(2, (2, 1, 0), "timeout")


def test_a_forfeit_after_an_elimination_ranks_by_elimination_time() -> None:
    # the house rule `elimination`: a stuck player goes out as a forfeit does (ruling 3)
    for seed in range(40):
        m = big_board(tc="none", seed=seed, options={"elimination": True})
        now = play_until_eliminated(m, seed, 1000)
        if not m.over:
            break
    else:  # pragma: no cover
        raise AssertionError("no game with an elimination found")
    (first_out,) = m.game.eliminated()
    alive = [s for s in range(3) if s != first_out]
    # the player out by having no move leaves: nothing changes
    assert m.resign(first_out, now) == [] and not m.over
    # an alive player resigns: the other alive one wins, the first out is last
    m.resign(alive[1], now + 1)
    assert m.result == Result(alive[0], (alive[0], alive[1], first_out), "resign")


def test_a_stuck_player_after_a_forfeit_ends_the_game_forfeits_ranked_last() -> None:
    import random

    m = big_board(players=4, seed=2, tc="none")
    m.resign(2, 1000)  # green goes out, the others play on (ruling 3)
    rng = random.Random(2)
    movers = []
    now = 1000
    while not m.over:
        now += 10
        movers.append(m.to_move())
        m.submit_move(m.to_move(), rng.choice(m.game.legal_moves()), now)
    # a stuck player ended it at once: the last mover wins, green (out) is last
    res = m.result
    assert res.reason == "no_moves" and res.winner == movers[-1] and res.order[-1] == 2
    stuck = res.order[-2]
    assert stuck not in movers[-2:] and m.game.eliminated() == [2]


def test_a_four_player_game_with_forfeits_replays_from_its_record() -> None:
    import random

    from engine.base import GameRecord, replay

    m = big_board(players=4, seed=5, tc="none")
    rng = random.Random(5)
    now = 1000
    for _ in range(3):
        now += 10
        m.submit_move(m.to_move(), rng.choice(m.game.legal_moves()), now)
    m.resign(m.to_move(), now)  # the mover: the turn passes
    m.resign((m.to_move() + 1) % 4, now)  # out of turn
    assert len(m.game.eliminated()) == 2
    while not m.over:
        now += 10
        m.submit_move(m.to_move(), rng.choice(m.game.legal_moves()), now)
    assert m.result.reason in ("no_moves", "resign")
    data = m.record_dict()
    assert [f["reason"] for f in data["forfeits"]] == ["resign", "resign"]
    assert [f["ply"] for f in data["forfeits"]] == [3, 3]
    again = replay(GameRecord.from_dict(data))
    assert again.position() == m.game.position()
    assert again.result() == m.result  # the board's own ending (no_moves)
    # ranked by elimination time: the first to forfeit is last
    assert m.result.order[-1] == data["forfeits"][0]["seat"]
    assert m.result.order[-2] == data["forfeits"][1]["seat"]
    # a snapshot restores it too
    assert type(m.game).restore(m.game.snapshot()).position() == m.game.position()


def test_two_player_forfeits_end_the_game_as_before() -> None:
    m = big_board(players=2)
    m.submit_move(0, m.game.legal_moves()[0], 1100)
    m.submit_move(1, m.game.legal_moves()[0], 1200)
    events = m.resign(1, 1500)
    assert [e["type"] for e in events] == ["game_over"]
    assert m.result == Result(0, (0, 1), "resign")
    assert "forfeits" not in m.record_dict()
