"""The fast 3-4 player search of the strong level (issue 20): the same moves and the same
finishing order as the game (ruling 3), kills found, deterministic, used only where it applies."""

from __future__ import annotations

import random

import pytest

from engine.ai import multi
from engine.ai.collapsi import rewards
from engine.ai.strong import StrongPlayer
from engine.base import new_game
from engine.collapsi import CollapsiGame


def _random_positions(players: int, count: int, seed: int):
    """Positions of random Big Board games (every ply), with the game object."""
    rng = random.Random(seed)
    out = []
    deal = 0
    while len(out) < count:
        game = new_game("collapsi", variant="big-board", players=players, seed=deal)
        deal += 1
        assert isinstance(game, CollapsiGame)
        while not game.is_over():
            out.append(game.copy())
            game.play(rng.choice(game.legal_moves()))
    return out[:count]


@pytest.mark.parametrize("players", [3, 4])
def test_moves_and_finishing_order_match_the_game(players: int) -> None:
    rng = random.Random(players)
    for game in _random_positions(players, 150, players):
        assert multi.applies(game)
        s = multi._Search(game, rng)
        collapsed, occupied, pawns, turn = s.root
        assert s.moves(collapsed, occupied, pawns[turn]) == game.legal_cells()
        for d in game.legal_cells():
            after = game.copy()
            after.play_cell(d)
            result = after.result()
            cell = pawns[turn]
            c2, o2 = collapsed | 1 << cell, occupied ^ (1 << cell | 1 << d)
            nxt = s.after[turn]
            moved = list(pawns)
            moved[turn] = d
            assert s.can_move(c2, o2, moved[nxt]) == (result is None)
            if result is not None:  # ruling 3: the next seat is stuck, the mover wins
                assert result.order[-1] == nxt and result.winner == turn
                assert s.rewards[nxt] == rewards(result, players)


def test_a_forfeited_seat_is_skipped_and_ranks_last() -> None:
    game = new_game("collapsi", variant="big-board", players=4, seed=3)
    assert isinstance(game, CollapsiGame)
    game.eliminate(2, "resigned")
    s = multi._Search(game, random.Random(0))
    assert s.after == {0: 1, 1: 3, 3: 0}
    # seat 3 stuck: seat 1 moved last (first), then seat 0; seat 3 third; seat 2 (out) last
    assert s.rewards[3] == (2 / 3, 1.0, 0.0, 1 / 3)


def _kill_positions(count: int):
    """Positions where the mover has a move that leaves the next seat stuck, and one that
    does not: (game, killing destinations)."""
    found = []
    for game in _random_positions(4, 4000, 11):
        kills = []
        for d in game.legal_cells():
            after = game.copy()
            after.play_cell(d)
            if after.result() is not None:
                kills.append(d)
        if kills and len(kills) < len(game.legal_cells()):
            found.append((game, kills))
            if len(found) == count:
                break
    return found


def test_the_strong_player_takes_a_move_that_leaves_the_next_seat_stuck() -> None:
    positions = _kill_positions(5)
    assert positions
    for game, kills in positions:
        bot = StrongPlayer(seed=1, iterations=400)
        assert int(bot.choose(game)) in kills
        assert bot.last_source == "mcts"


def test_search_is_deterministic_and_budgets_playouts() -> None:
    game = _random_positions(4, 1, 5)[0]
    a = multi.search(game, random.Random(7), 500)
    b = multi.search(game, random.Random(7), 500)
    assert a == b
    assert sum(v for v, _ in a[1].values()) == 500
    assert set(a[1]) == set(game.legal_cells())


@pytest.mark.parametrize(
    "setup",
    [
        {"variant": "big-board", "players": 4, "options": {"elimination": True}},
        {"variant": "big-board+shifting", "players": 3},
        {"variant": "big-board+players-choice", "players": 3},
        {"variant": "big-board", "players": 2},
    ],
)
def test_other_boards_keep_the_other_searches(setup: dict) -> None:
    game = new_game("collapsi", seed=2, **setup)
    assert isinstance(game, CollapsiGame)
    assert not multi.applies(game)
    bot = StrongPlayer(seed=0, iterations=100, solver_nodes=5000)
    assert bot.choose(game) in game.legal_moves()
    assert bot.last_source != "mcts"
