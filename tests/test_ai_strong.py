"""The strong Collapsi player (issue 20): exact where its solver finishes, one solver kept
for the game, a search elsewhere; budgets in positions (deterministic) or CPU time."""

from __future__ import annotations

import random

import pytest

from engine.ai import LEVELS, make_player
from engine.ai.strong import StrongPlayer
from engine.base import new_game
from engine.collapsi import CollapsiGame
from engine.collapsi.solver import solve_winner
from tests.test_ai_players import _play_out


def test_strong_is_a_level_of_both_games() -> None:
    assert LEVELS["collapsi"][-1] == "strong" and LEVELS["collecto"][-1] == "strong"


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_strong_wins_every_won_4x4_deal_with_one_solver_for_the_game(rules: str) -> None:
    for seed in range(6):
        game = new_game("collapsi", rules=rules, seed=seed)
        assert isinstance(game, CollapsiGame)
        winner = solve_winner(game.to_position())
        strong = StrongPlayer(seed=seed, iterations=200)
        bots = [make_player("collapsi", "mcts", seed=seed, iterations=50)] * 2
        bots[winner] = strong  # type: ignore[call-overload]
        solvers = set()
        while not game.is_over():
            move = bots[game.to_move()].choose(game)
            if bots[game.to_move()] is strong and len(game.legal_moves()) > 1:
                assert strong.last_source == "solver"
                solvers.add(id(strong._solver))
            game.play(move)
        assert game.result().winner == winner
        assert len(solvers) == 1  # kept from move to move


def test_strong_plays_a_winning_move_in_won_5x5_positions() -> None:
    """Exact on 5x5: from positions a few random moves in, every move it chooses in a
    won position keeps the win (checked by a separate solve)."""
    rng = random.Random(4)
    checked = 0
    for seed in range(3):
        game = new_game("collapsi", variant="custom", options={"preset": "5x5"}, seed=seed)
        for _ in range(8):
            game.play(rng.choice(game.legal_moves()))
        pos = game.to_position()
        if game.is_over() or solve_winner(pos) != pos.to_move:
            continue
        bot = StrongPlayer(seed=seed, iterations=50)
        after = game.copy()
        after.play(bot.choose(game))
        assert bot.last_source == "solver"
        assert after.is_over() or solve_winner(after.to_position()) == pos.to_move
        checked += 1
    assert checked


def test_strong_searches_where_the_solver_does_not_apply() -> None:
    for setup in (
        {"variant": "big-board+shifting", "players": 3},
        {"variant": "shifting"},
        {"variant": "custom", "options": {"preset": "6x6-2p"}},
    ):
        game = new_game("collapsi", seed=1, **setup)
        bot = StrongPlayer(seed=0, iterations=300)
        assert bot.choose(game) in game.legal_moves()
        assert bot.last_source == "search" and bot.last_depth >= 1


def test_strong_is_deterministic_under_an_iteration_budget() -> None:
    def game_of(seed: int) -> list[str]:
        game = new_game("collapsi", variant="big-board", players=3, seed=5)
        bots = [StrongPlayer(seed=seed + s, iterations=150) for s in range(3)]
        return _play_out(game, bots).history

    assert game_of(1) == game_of(1)


def test_strong_more_positions_search_deeper() -> None:
    game = new_game("collapsi", variant="big-board+shifting", players=4, seed=2)
    shallow, deep = StrongPlayer(iterations=5), StrongPlayer(iterations=5000)
    shallow.choose(game)
    deep.choose(game)
    assert shallow.last_depth == 1 < deep.last_depth


def test_strong_plays_big_board_with_3_and_4_players_by_playouts() -> None:
    for players in (3, 4):
        game = new_game("collapsi", variant="big-board", players=players, seed=1)
        bot = StrongPlayer(seed=0, iterations=300)
        assert bot.choose(game) in game.legal_moves()
        assert bot.last_source == "mcts"


@pytest.mark.parametrize("game_name", ["collapsi", "collecto"])
def test_strong_with_a_cpu_time_budget_only_finishes_games(game_name: str) -> None:
    kw = {"variant": "big-board", "players": 3} if game_name == "collapsi" else {}
    game = new_game(game_name, seed=3, **kw)
    bots = [make_player(game_name, "strong", seed=s, budget_ms=5) for s in range(3)]
    _play_out(game, bots)
    assert game.result() is not None
