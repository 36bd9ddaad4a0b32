"""AI players: legal moves in every variant, determinism, budgets, perfect play."""

from __future__ import annotations

import random

import pytest

from engine.ai import LEVELS, Player, make_player
from engine.ai.collapsi import CollapsiState, PerfectPlayer
from engine.ai.collecto import SearchPlayer
from engine.ai.mcts import mcts
from engine.ai.strong import StrongPlayer
from engine.base import Game, GameOver, SetupError, new_game
from engine.collapsi import CollapsiGame
from engine.collapsi.solver import solve_winner

# (rules, variant, players, options): every published form of Collapsi
COLLAPSI_SETUPS = [
    ("standard", "base", 2, None),
    ("classic", "base", 2, None),
    ("standard", "big-board", 2, None),
    ("standard", "big-board", 3, None),
    ("classic", "big-board", 4, None),
    ("standard", "shifting", 2, None),
    ("classic", "big-board+shifting", 3, None),
    ("standard", "players-choice", 2, None),
    ("standard", "big-board+players-choice", 4, None),
    ("classic", "custom", 2, {"preset": "5x5"}),
    ("standard", "custom", 2, {"preset": "6x6-2p"}),
    ("standard", "big-board", 4, {"elimination": True}),
    ("standard", "solo", 1, {"size": 3}),
    ("standard", "solo", 1, {"size": 4}),
]


def _player(game: str, level: str, seed: int, setup_players: int = 2) -> Player:
    if level == "perfect":
        # a small solver budget keeps big boards quick; they fall back to MCTS
        return PerfectPlayer(seed=seed, iterations=20, max_nodes=5000)
    if level == "strong" and game == "collapsi":
        # the same: a small solver budget per move (leaf solves stay exact)
        return StrongPlayer(seed=seed, iterations=20, solver_nodes=5000)
    return make_player(game, level, seed=seed, iterations=20)


def _play_out(game: Game, players: list[Player]) -> Game:
    """Play to the end, checking every answer against the engine's legal moves."""
    while not game.is_over():
        before = game.position()
        legal = game.legal_moves()
        move = players[game.to_move()].choose(game)
        assert game.position() == before, "choose() must not change the game"
        assert move in legal, f"{players[game.to_move()]!r} chose illegal {move!r}"
        game.play(move)
    return game


@pytest.mark.parametrize("level", LEVELS["collapsi"])
@pytest.mark.parametrize(("rules", "variant", "players", "options"), COLLAPSI_SETUPS)
def test_collapsi_bots_only_play_legal_moves(level, rules, variant, players, options):
    for seed in range(2):
        game = new_game(
            "collapsi", rules=rules, variant=variant, seed=seed, players=players, options=options
        )
        bots = [_player("collapsi", level, seed * 10 + s) for s in range(players)]
        _play_out(game, bots)
        assert game.result() is not None


@pytest.mark.parametrize("level", LEVELS["collecto"])
def test_collecto_bots_only_play_legal_moves(level):
    for seed in range(2):
        game = new_game("collecto", seed=seed)
        opponent = make_player("collecto", "random", seed=seed)
        bots = [_player("collecto", level, seed), opponent]
        if seed:
            bots.reverse()
        _play_out(game, bots)
        assert game.result() is not None


def test_collecto_double_moves_are_chosen_legally():
    # play random moves until a position with only double moves turns up
    rng = random.Random(5)
    for seed in range(40):
        game = new_game("collecto", seed=seed)
        while not game.is_over() and "," not in game.legal_moves()[0]:
            game.play(rng.choice(game.legal_moves()))
        if not game.is_over():
            break
    else:  # pragma: no cover - the deals above do reach double moves
        pytest.skip("no double-move position found")
    for level in LEVELS["collecto"]:
        move = make_player("collecto", level, seed=1, iterations=200).choose(game)
        assert "," in move and move in game.legal_moves()


def _full_game(game_name: str, level: str, seed: int, **kw) -> list[str]:
    game = new_game(game_name, seed=7, **kw)
    bots = [make_player(game_name, level, seed=seed + s, iterations=50) for s in range(2)]
    return _play_out(game, bots).history


@pytest.mark.parametrize(
    ("game_name", "level"), [(g, lv) for g in LEVELS for lv in LEVELS[g] if lv != "random"]
)
def test_deterministic_given_seed(game_name, level):
    assert _full_game(game_name, level, 1) == _full_game(game_name, level, 1)


def test_random_players_depend_on_their_seed():
    histories = {tuple(_full_game("collapsi", "random", s)) for s in range(6)}
    assert len(histories) > 1
    histories = {tuple(_full_game("collecto", "random", s)) for s in range(4)}
    assert len(histories) > 1


def test_answer_depends_on_position_not_on_call_history():
    game = new_game("collapsi", variant="big-board", players=3, seed=2)
    bot = make_player("collapsi", "mcts", seed=3, iterations=40)
    first = bot.choose(game)
    other = new_game("collapsi", seed=9)
    bot.choose(other)
    assert bot.choose(game) == first
    assert make_player("collapsi", "mcts", seed=3, iterations=40).choose(game) == first


def test_mcts_iteration_budget_is_exact():
    for setup in [{}, {"variant": "big-board", "players": 4}, {"variant": "shifting"}]:
        game = new_game("collapsi", seed=4, **setup)
        for iterations in (1, 17, 200):
            _move, stats = mcts(CollapsiState(game), random.Random(0), iterations)
            assert sum(v for v, _ in stats.values()) == iterations


def test_mcts_stops_at_a_passed_deadline_after_one_iteration():
    game = new_game("collapsi", variant="big-board", players=4, seed=1)
    _move, stats = mcts(CollapsiState(game), random.Random(0), None, deadline=0.0)
    assert sum(v for v, _ in stats.values()) == 1


def test_search_player_budgets():
    game = new_game("collecto", seed=3)
    deep = SearchPlayer(seed=0, iterations=20_000)
    deep.choose(game)
    shallow = SearchPlayer(seed=0, iterations=1)
    assert shallow.choose(game) in game.legal_moves()
    assert shallow.last_depth == 1 < deep.last_depth
    # a time budget that is already spent still answers, from depth 1
    timed = SearchPlayer(seed=0, budget_ms=1)
    assert timed._choose(game, random.Random(0), 0.0) in game.legal_moves()
    assert timed.last_depth == 1


def test_perfect_player_uses_the_solver_and_falls_back():
    game = new_game("collapsi", seed=5)
    bot = PerfectPlayer(seed=0)
    bot.choose(game)
    assert bot.last_source == "solver"
    big = new_game("collapsi", variant="custom", options={"preset": "6x6-2p"}, seed=1)
    starved = PerfectPlayer(seed=0, iterations=30, max_nodes=2000)
    assert starved.choose(big) in big.legal_moves()
    assert starved.last_source == "search"
    four = new_game("collapsi", variant="big-board", players=4, seed=1)
    bot.choose(four)
    assert bot.last_source == "search"


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_perfect_player_wins_every_won_deal_against_random(rules):
    checked = 0
    for seed in range(12):
        game = new_game("collapsi", rules=rules, seed=seed)
        assert isinstance(game, CollapsiGame)
        winner = solve_winner(game.to_position())
        bots: list[Player] = [make_player("collapsi", "random", seed=seed)] * 2
        bots[winner] = make_player("collapsi", "perfect", seed=seed)
        _play_out(game, bots)
        assert game.result().winner == winner, game.history
        checked += 1
    assert checked == 12


def test_perfect_player_wins_won_positions_midgame():
    # positions after a few random moves: whoever the solver says wins, perfect wins
    rng = random.Random(11)
    for seed in range(10):
        game = new_game("collapsi", rules="classic", seed=seed)
        for _ in range(rng.randrange(1, 5)):
            if game.is_over():
                break
            game.play(rng.choice(game.legal_moves()))
        if game.is_over():
            continue
        winner = solve_winner(game.to_position())
        bots: list[Player] = [make_player("collapsi", "random", seed=seed)] * 2
        bots[winner] = make_player("collapsi", "perfect", seed=seed)
        _play_out(game, bots)
        assert game.result().winner == winner


def test_registry_errors_and_game_over():
    with pytest.raises(SetupError):
        make_player("chess", "random")
    with pytest.raises(SetupError):
        make_player("collecto", "perfect")
    with pytest.raises(ValueError):
        make_player("collapsi", "mcts", iterations=0)
    with pytest.raises(SetupError):
        make_player("collapsi", "greedy").choose(new_game("collecto", seed=1))
    game = new_game("collapsi", seed=1)
    while not game.is_over():
        game.play(game.legal_moves()[0])
    with pytest.raises(GameOver):
        make_player("collapsi", "mcts").choose(game)


def test_perfect_player_places_pawns_by_the_solver_in_players_choice():
    found_winning_start = False
    for seed in range(4):
        game = new_game("collapsi", variant="players-choice", seed=seed)
        bot = PerfectPlayer(seed=seed)
        red = bot.choose(game)
        assert bot.last_source == "solver"
        game.play(red)
        winning = set()
        for cell in game.legal_moves():
            after = game.copy()
            after.play(cell)
            if after.is_over() or solve_winner(after.to_position()) == 1:
                winning.add(cell)
        blue = bot.choose(game)
        if winning:
            found_winning_start = True
            assert bot.last_source == "solver" and blue in winning
        else:
            assert bot.last_source == "search"
    assert found_winning_start


def test_perfect_player_solves_solo_puzzles():
    for seed in range(3):
        game = new_game("collapsi", variant="solo", options={"size": 3}, seed=seed)
        bot = make_player("collapsi", "perfect", seed=seed)
        _play_out(game, [bot])
        assert game.result().reason == "solved"


def test_time_budget_only_players_finish_games():
    # no iteration cap: the searches stop on the clock alone (kept short here)
    game = new_game("collapsi", variant="big-board", players=4, seed=3)
    _play_out(game, [make_player("collapsi", lv, seed=1, budget_ms=5) for lv in LEVELS["collapsi"]])
    game = new_game("collecto", seed=3)
    bots = [make_player("collecto", "search", seed=s, budget_ms=5) for s in range(2)]
    _play_out(game, bots)
