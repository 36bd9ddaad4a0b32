"""Collapsi rules and every numbered Collapsi ruling (1-9) of ../shared/rules/README.md."""

from __future__ import annotations

import random

import pytest

from engine import GameOver, IllegalMove, NotationError, Result, SetupError, new_game, replay
from engine.collapsi import CollapsiGame, Position, solo_count
from engine.collapsi.board import board

DEAL = "41J124313J322123"  # red starts on cell 2, blue on cell 9


def custom(position: str, rules: str = "standard") -> CollapsiGame:
    """A game from a position on a board whose deck is whatever the position shows."""
    return CollapsiGame.from_position(position, rules=rules, variant="custom")


def play_out(game: CollapsiGame, seed: int) -> CollapsiGame:
    rng = random.Random(seed)
    while not game.is_over():
        game.play(rng.choice(game.legal_moves()))
    return game


# -- ruling 1: two rule sets ------------------------------------------------------------


def test_ruling_1_standard_is_default_and_jack_moves_exactly_one() -> None:
    game = CollapsiGame.from_setup(DEAL)
    assert game.rules == "standard" and game.rules_version == "1.3.1"
    assert new_game("collapsi").rules == "standard"
    assert game.steps() == "1"
    assert game.legal_cells() == [1, 3, 6, 14]  # the four torus neighbours of cell 2


def test_ruling_1_classic_joker_moves_one_to_four() -> None:
    game = CollapsiGame.from_setup(DEAL, rules="classic")
    assert game.rules_version == "1.1.0" and game.steps() == "1-4"
    # everything but the start (2) and blue's card (9) is reachable in 1..4 steps
    assert game.legal_cells() == [c for c in range(16) if c not in (2, 9)]
    game.play("0")  # a 2-step first move (2 -> 1 -> 0) is fine under classic rules
    with pytest.raises(IllegalMove):
        CollapsiGame.from_setup(DEAL).play("0")


def test_ruling_1_record_names_rules_and_version() -> None:
    for rules, version in (("standard", "1.3.1"), ("classic", "1.1.0")):
        record = play_out(new_game("collapsi", rules=rules, seed=3), 3).record()
        assert (record.rules, record.rules_version) == (rules, version)
    with pytest.raises(SetupError):
        new_game("collapsi", rules="v2")


# -- ruling 2: a move is a path of exactly N steps -----------------------------------------


def test_ruling_2_may_pass_through_a_pawn_but_not_end_there() -> None:
    # red on 0 (a 2) with blue on 1; everything else but cell 2 has collapsed
    game = custom("211b/cccc/dddd/aaaa 0,1 0")
    assert game.legal_cells() == [2]
    assert game.path_to(2) == [0, 1, 2]
    # blue on cell 2 now: red's 2-step walks 0-1-2 and 0-3-2 both end on blue, so
    # only 5 (0-1-5 or 0-4-5) is left
    game = custom("2111/11cc/dddd/aaaa 0,2 0")
    assert game.legal_cells() == [5]
    with pytest.raises(IllegalMove, match="another pawn"):
        game.play("2")


def test_ruling_2_starting_card_counts_as_entered_so_no_loop_home() -> None:
    # red on a 4 with the rest of its row open: the only 4-step walk along the
    # row would end on the starting card, so red has no move and loses at once
    game = custom("4111/1aaa/aaaa/aaaa 0,4 0")
    assert game.legal_cells() == []
    assert game.is_over() and game.result().winner == 1


def test_ruling_2_no_collapsed_card_no_card_twice() -> None:
    # red on a 3 at cell 5; only its own row is face up (blue on 7)
    game = custom("aaaa/1311/aaaa/aaaa 5,7 0")
    # 5-6-7-4 (through blue) and 5-4-7-6 (wrapping); nothing may re-enter a card
    assert game.legal_cells() == [4, 6]
    assert game.path_to(4) == [5, 6, 7, 4]
    # with cell 4 collapsed no 3-step walk remains
    stuck = custom("aaaa/a311/aaaa/aaaa 5,7 0")
    assert stuck.legal_cells() == [] and stuck.result().winner == 1


def test_ruling_2_same_destination_is_one_move() -> None:
    game = CollapsiGame.from_setup(DEAL)
    game.play("14")
    game.play("13")
    moves = game.legal_moves()
    assert len(moves) == len(set(moves))
    # red on 14 (a 2): the diagonal cells are reachable two ways each, listed once
    assert game.legal_cells() == sorted(set(game.legal_cells()))
    walks = board(4, 4).walks(14, 2, game.to_position().collapsed)
    assert len(walks) > len(game.legal_cells())


def test_ruling_2_illegal_moves_say_why() -> None:
    game = CollapsiGame.from_setup(DEAL)
    with pytest.raises(IllegalMove, match="starting card"):
        game.play("2")
    with pytest.raises(IllegalMove, match="off the board"):
        game.play("16")
    with pytest.raises(NotationError):
        game.play("up")
    with pytest.raises(IllegalMove, match="no path"):
        game.play("0")


# -- ruling 3: collapse, losing, 3-4 player finishing order ---------------------------------


def test_ruling_3_start_card_collapses_and_stuck_player_loses_at_once() -> None:
    game = CollapsiGame.from_setup(DEAL)
    game.play("14")
    assert game.to_position().collapsed == 1 << 2
    for m in ["13", "1", "12", "5", "4", "8", "6", "3", "7", "0", "11"]:
        game.play(m)
    res = game.result()
    assert res is not None and res.winner == 1 and res.order == (1, 0)
    assert res.reason == "no_moves" and game.to_move() is None
    with pytest.raises(GameOver):
        game.play("1")


def test_ruling_3_custom_three_players_stuck_player_ends_the_game() -> None:
    # red (2) can only go to 3; blue (5) is boxed in; green (10) can go to 11
    game = custom("aa11/a1aa/aa11/aaaa 2,5,10 0")
    assert game.num_players == 3 and game.seat_names() == ["red", "blue", "green"]
    game.play("3")
    # blue has no move: the game ends at once; red moved last and wins, green (who
    # has not moved since) second, blue last
    assert game.to_move() is None and game.eliminated() == []
    assert game.result() == Result(0, (0, 2, 1), "no_moves")


# A Big Board position (4 jacks, 8 each of 1-4): red on 0 can only go to 1 (then
# boxed in); blue on 14 is boxed in; green on 28 can only go to 29 (then boxed in).
BIG_STUCK = "11jjjj/aaabbb/bb1bbb/cccccc/ccdd11/dddddd"


def big_stuck(options: dict | None = None) -> CollapsiGame:
    return CollapsiGame.from_position(
        f"{BIG_STUCK} 0,14,28 0", variant="big-board", players=3, options=options
    )


def test_ruling_3_big_board_three_players_stuck_player_ends_the_game() -> None:
    game = big_stuck()
    game.play("1")
    assert game.result() == Result(0, (0, 2, 1), "no_moves")  # green never moved: second
    # stuck before anyone moved: as if the others had moved in turn order before
    first = CollapsiGame.from_position(f"{BIG_STUCK} 14,0,28 0", variant="big-board")
    assert first.result() == Result(2, (2, 1, 0), "no_moves")
    assert first.result().order == finishing_order(first, [])


def test_ruling_3_house_rule_elimination_keeps_the_stuck_player_out_and_plays_on() -> None:
    game = big_stuck({"elimination": True})
    assert game.options() == {"elimination": True}
    game.play("1")
    # blue has no move: out first (their card stays face up), play goes on with green
    assert game.to_move() == 2 and game.eliminated() == [1]
    assert game.position().split()[1] == "1,x1,28"
    assert not game.to_position().collapsed >> 14 & 1
    game.play("29")
    # red is boxed in too: two were in, so the game ends; green made the last move
    assert game.result() == Result(2, (2, 0, 1), "no_moves")


def test_ruling_3_elimination_is_a_big_board_option_and_does_not_change_the_deal() -> None:
    plain = new_game("collapsi", variant="big-board", players=3, seed=4)
    house = new_game(
        "collapsi", variant="big-board", players=3, seed=4, options={"elimination": True}
    )
    assert house.setup() == plain.setup() and plain.options() == {}
    off = new_game("collapsi", variant="big-board", seed=4, options={"elimination": False})
    assert off.options() == {}
    with pytest.raises(SetupError, match="big-board"):
        new_game("collapsi", options={"elimination": True})
    with pytest.raises(SetupError, match="true or false"):
        new_game("collapsi", variant="big-board", options={"elimination": "yes"})


def finishing_order(game: CollapsiGame, movers: list[int]) -> tuple[int, ...]:
    """Ruling 3 computed from the movers: by last move, most recent first, then the
    stuck player; seats that never moved rank as if they moved, in turn order, before
    the first move (the seat before the stuck one the most recent)."""
    n = game.num_players
    stuck = game.to_position().to_move
    last = {s: -1 - ((stuck - s) % n) for s in range(n)}  # never moved
    for ply, seat in enumerate(movers):
        last[seat] = ply
    others = sorted((s for s in range(n) if s != stuck), key=lambda s: -last[s])
    return (*others, stuck)


def random_movers(game: CollapsiGame, seed: int) -> list[int]:
    """Play random moves to the end; the seat that made each move."""
    movers = []
    rng = random.Random(seed)
    while not game.is_over():
        movers.append(game.to_move())
        game.play(rng.choice(game.legal_moves()))
    return movers


@pytest.mark.parametrize("players", [3, 4])
def test_ruling_3_big_board_first_stuck_player_ends_the_game(players: int) -> None:
    for seed in range(6):
        game = new_game("collapsi", variant="big-board", players=players, seed=seed)
        movers = random_movers(game, seed)
        res = game.result()
        assert game.eliminated() == []
        assert res.reason == "no_moves" and res.winner == res.order[0] == movers[-1]
        assert res.order == finishing_order(game, movers)


def test_ruling_3_house_rule_plays_on_to_the_last_two() -> None:
    for seed in range(6):
        game = new_game(
            "collapsi", variant="big-board", players=4, seed=seed, options={"elimination": True}
        )
        movers = random_movers(game, seed)
        res = game.result()
        out = game.eliminated()
        assert len(out) == 2 and res.winner == movers[-1]
        assert res.order[2:] == tuple(reversed(out))  # the first out is last


# -- ruling 4: Big Board --------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ruling_4_big_board_jacks_in_deal_order_unused_collapse(players: int) -> None:
    game = new_game("collapsi", variant="big-board", players=players, seed=11)
    deal = game.setup()
    assert len(deal) == 36
    assert sorted(deal) == sorted("JJJJ" + "1234" * 8)
    jacks = [i for i, ch in enumerate(deal) if ch == "J"]
    pos = game.to_position()
    assert pos.pawns == tuple(jacks[:players])
    assert pos.collapsed == sum(1 << j for j in jacks[players:])
    assert game.seat_names() == ["red", "blue", "green", "yellow"][:players]


def test_ruling_4_big_board_player_counts() -> None:
    for bad in (1, 5):
        with pytest.raises(SetupError):
            new_game("collapsi", variant="big-board", players=bad)
    with pytest.raises(SetupError):
        new_game("collapsi", variant="base", players=3)


# -- ruling 5: Shifting Board ----------------------------------------------------------------


def test_ruling_5_row_shift_moves_cards_gaps_and_pawns() -> None:
    game = CollapsiGame.from_setup(DEAL, variant="shifting")
    assert game.legal_moves()[:4] == ["1<", "1>", "1^", "1v"]
    assert len(game.legal_moves()) == 4 * len(game.legal_cells())
    game.play("3>")  # red 2 -> 3, then row 0 rotates right: [1(red), 4, 1, J(gap)]
    board_text, pawns, turn = game.position().split()
    assert board_text.split("/")[0] == "141j"
    assert pawns == "0,9" and turn == "1"


def test_ruling_5_column_shift_and_move_part_must_be_legal() -> None:
    game = CollapsiGame.from_setup(DEAL, variant="shifting")
    game.play("3v")  # column 3 (cells 3, 7, 11, 15 = 1, 1, 2, 3) rotates down
    pos = game.to_position()
    assert [pos.cards[c] for c in (3, 7, 11, 15)] == [3, 1, 1, 2]
    assert pos.pawns[0] == 7 and pos.collapsed == 1 << 2
    other = CollapsiGame.from_setup(DEAL, variant="shifting")
    with pytest.raises(IllegalMove, match="shift"):
        other.play("3")  # the shift is part of the move
    with pytest.raises(IllegalMove):
        other.play("0>")  # the move part is illegal (2 steps from a jack)


# -- ruling 6: Player's Choice --------------------------------------------------------------


def test_ruling_6_players_choice_jacks_collapse_and_starts_are_chosen() -> None:
    game = CollapsiGame.from_setup(DEAL, variant="players-choice")
    pos = game.to_position()
    assert pos.collapsed == (1 << 2) | (1 << 9)
    assert game.steps() == "place"
    assert game.legal_cells() == [c for c in range(16) if c not in (2, 9)]
    game.play("0")  # red starts on the 4 at cell 0
    assert 0 not in game.legal_cells()  # blue may not pick an occupied card
    game.play("15")  # blue starts on the 3 at cell 15
    assert game.to_move() == 0 and game.steps() == "4"  # the first real move follows the card
    # red's 4-step walks from cell 0 around the collapsed jacks, not ending on blue
    # (as the naive walker of test_collapsi_perft.py lists them), not a jack's 1 step
    first = game.legal_cells()
    assert first == [5, 7, 8, 10, 13]
    game.play("5")
    assert game.to_position().collapsed & 1  # the chosen start collapses as usual


def test_ruling_6_players_choice_with_big_board_and_shifting() -> None:
    game = new_game("collapsi", variant="big-board+players-choice+shifting", players=3, seed=4)
    assert game.variant == "big-board+shifting+players-choice"
    for _ in range(3):
        assert all(not m.endswith(tuple("<>^v")) for m in game.legal_moves())
        game.play(game.legal_moves()[0])
    assert all(m[-1] in "<>^v" for m in game.legal_moves())
    play_out(game, 4)
    assert replay(game.record()).position() == game.position()


# -- ruling 7: Solo ------------------------------------------------------------------------


def test_ruling_7_solo_deal_start_and_exit() -> None:
    game = new_game("collapsi", variant="solo", seed=5)
    deal = game.setup()
    assert sorted(deal) == sorted("JJ111222" + "3")
    jacks = [i for i, ch in enumerate(deal) if ch == "J"]
    assert game.to_position().pawns == (jacks[0],) and game.exit_cell == jacks[1]
    assert game.num_players == 1 and game.seat_names() == ["player"]


def test_ruling_7_win_by_passing_the_door_when_all_else_collapsed() -> None:
    # the pawn stands on a 2; everything but it and the exit (cell 1) has collapsed:
    # the first step reaches the exit, which ends the move (the door)
    game = CollapsiGame.from_position("2Jj/aaa/bbc 0 0", variant="solo")
    assert game.legal_cells() == [1]
    game.play("1")
    res = game.result()
    assert res is not None and res.reason == "solved" and res.winner == 0


def test_ruling_7_touching_the_exit_early_loses_and_so_does_no_move() -> None:
    game = CollapsiGame.from_position("1Jj/2aa/bbc 0 0", variant="solo")
    assert game.legal_cells() == [1, 3]
    early = game.copy()
    early.play("1")
    assert early.result().reason == "failed" and early.result().winner is None
    game.play("3")  # on the 2 at cell 3 every neighbour is gone: stuck
    assert game.result().reason == "failed"


def test_ruling_7_generator_deals_only_solvable_puzzles() -> None:
    for seed in range(6):
        wins, lines = solo_count(new_game("collapsi", variant="solo", seed=seed))
        assert 0 < wins <= lines
    big = new_game("collapsi", variant="solo", seed=1, options={"size": 4})
    assert len(big.setup()) == 16 and big.setup().count("J") == 2
    assert solo_count(big)[0] > 0
    with pytest.raises(SetupError):
        new_game("collapsi", variant="solo", options={"size": 5})


# -- ruling 8: custom boards and decks --------------------------------------------------------


def test_ruling_8_presets_and_explicit_decks() -> None:
    game = new_game("collapsi", variant="custom", seed=2, options={"preset": "5x5"})
    assert (game.width, game.height) == (5, 5) and len(game.setup()) == 25
    assert game.options() == {"preset": "5x5"}
    deck = {"J": 2, "1": 9, "2": 9, "3": 8, "4": 8}
    explicit = new_game("collapsi", variant="custom", seed=2, options={"deck": deck, "size": 6})
    assert sorted(explicit.setup()) == sorted("JJ" + "1" * 9 + "2" * 9 + "3" * 8 + "4" * 8)
    play_out(explicit, 2)
    assert replay(explicit.record()).position() == explicit.position()
    assert new_game("collapsi", variant="custom", options={"preset": "6x6-2p"}).num_players == 2


def test_ruling_8_deck_that_does_not_fit_the_board_is_rejected() -> None:
    with pytest.raises(SetupError, match="needs 25"):
        new_game("collapsi", variant="custom", options={"deck": {"J": 2, "1": 20}, "size": 5})
    with pytest.raises(SetupError, match="preset"):
        new_game("collapsi", variant="custom", options={"preset": "9x9"})
    with pytest.raises(SetupError):
        new_game("collapsi", variant="custom", options={"deck": {"J": 1, "1": 24}, "size": 5})
    with pytest.raises(SetupError, match="wrong cards"):
        CollapsiGame.from_setup("JJ11111111111111")


def test_ruling_8_non_square_board_with_row_separators() -> None:
    deck = {"J": 2, "1": 4, "2": 4, "3": 4, "4": 6}
    game = new_game(
        "collapsi", variant="custom", seed=1, options={"deck": deck, "width": 5, "height": 4}
    )
    assert game.setup().count("/") == 3 and (game.width, game.height) == (5, 4)
    again = CollapsiGame.from_setup(game.setup(), variant="custom")
    assert again.position() == game.position()


# -- ruling 9: reproducible deals and the compact notation ----------------------------------------


def test_ruling_9_deals_are_pure_functions_of_rules_variant_seed() -> None:
    for variant in ("base", "big-board", "shifting", "solo"):
        a = new_game("collapsi", variant=variant, seed=42).setup()
        assert a == new_game("collapsi", variant=variant, seed=42).setup()
    seeds = {new_game("collapsi", seed=s).setup() for s in range(20)}
    assert len(seeds) > 15


def test_ruling_9_position_notation_marks_collapsed_and_pawns() -> None:
    game = CollapsiGame.from_setup(DEAL)
    assert game.position() == "41J1/2431/3J32/2123 2,9 0"
    game.play("14")
    assert game.position() == "41j1/2431/3J32/2123 14,9 1"
    back = CollapsiGame.from_position(game.position())
    assert back.position() == game.position()
    assert back.legal_cells() == game.legal_cells()
    assert CollapsiGame.from_position(game.to_position()).position() == game.position()
    with pytest.raises(NotationError):
        CollapsiGame.from_position("41J1/2431/3J32/2123 2,99 0")


def test_position_primitive_shape() -> None:
    pos = CollapsiGame.from_setup(DEAL).to_position()
    assert isinstance(pos, Position)
    assert pos.cards[:4] == (4, 1, 0, 1) and pos.pawns == (2, 9) and pos.to_move == 0
    assert (pos.width, pos.height, pos.cells, pos.rules) == (4, 4, 16, "standard")


def test_view_and_render() -> None:
    game = CollapsiGame.from_setup(DEAL)
    view = game.view()
    assert view["to_move"] == 0 and view["steps"] == "1" and view["phase"] == "move"
    assert view["legal_cells"] == [1, 3, 6, 14]
    assert view["paths"]["14"] == [2, 14]
    assert view["cards"][2] == "J" and view["pawns"] == [2, 9]
    text = game.render()
    assert "RJ" in text and "BJ" in text and "red to move 1" in text
