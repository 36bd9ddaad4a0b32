"""The solver against a deliberately naive full minimax written here, separately.

The naive side walks every path step by step on the torus (no tables, no
masks, no pruning, no transposition table) and evaluates game-length-perfect
play by plain recursion, so it shares no code with the solver.
"""

from __future__ import annotations

import random

import pytest

from engine.base import NotationError, SetupError
from engine.collapsi.position import Position
from engine.collapsi.solver import (
    Solver,
    SolverBudgetExceeded,
    analyse,
    best_move,
    canonical_deal,
    legal_destinations,
    parse_deal,
    play,
    solve_length,
    solve_winner,
)

# -- the naive reference ------------------------------------------------------


def naive_moves(pos: Position) -> set[int]:
    w, h = pos.width, pos.height
    me = pos.pawns[pos.to_move]
    opp = pos.pawns[1 - pos.to_move]
    card = pos.cards[me]
    steps = [card] if card else ([1, 2, 3, 4] if pos.rules == "classic" else [1])
    out: set[int] = set()

    def walk(cell: int, left: int, seen: list[int]) -> None:
        if left == 0:
            if cell != opp and cell != me:
                out.add(cell)
            return
        r, c = divmod(cell, w)
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            nxt = (nr % h) * w + (nc % w)
            if nxt in seen or (pos.collapsed >> nxt) & 1:
                continue
            walk(nxt, left - 1, [*seen, nxt])

    for k in steps:
        walk(me, k, [me])
    return out


def naive_play(pos: Position, dest: int) -> Position:
    pawns = list(pos.pawns)
    start = pawns[pos.to_move]
    pawns[pos.to_move] = dest
    return Position(
        pos.rules,
        pos.width,
        pos.height,
        pos.cards,
        pos.collapsed | (1 << start),
        tuple(pawns),
        1 - pos.to_move,
    )


def naive_solve(pos: Position) -> tuple[bool, int]:
    """(mover wins, plies left) under game-length-perfect play, by full minimax."""
    results = [naive_solve(naive_play(pos, d)) for d in naive_moves(pos)]
    if not results:
        return False, 0
    winning = [p for w, p in results if not w]
    if winning:
        return True, 1 + min(winning)
    return False, 1 + max(p for _, p in results)


def naive_move_values(pos: Position) -> dict[int, int]:
    return {d: 1 + naive_solve(naive_play(pos, d))[1] for d in naive_moves(pos)}


# -- random positions ------------------------------------------------------------

DECKS = {
    (4, 4): "JJ11112222333344",
    (3, 3): "JJ1112223",
    (3, 4): "JJ1112223334",
    (4, 3): "JJ1112223334",
    (2, 4): "JJ112234",
    (5, 2): "JJ11223341",
}


def random_position(rng: random.Random, rules: str, w: int, h: int, prefix: int) -> Position:
    deck = list(DECKS[(w, h)])
    rng.shuffle(deck)
    cards = tuple(0 if ch == "J" else int(ch) for ch in deck)
    jacks = [i for i, v in enumerate(cards) if v == 0]
    pos = Position(rules, w, h, cards, 0, (jacks[0], jacks[1]), 0)
    for _ in range(prefix):
        moves = sorted(naive_moves(pos))
        if not moves:
            break
        pos = naive_play(pos, rng.choice(moves))
    return pos


def cases() -> list[tuple[str, int, int, int, int]]:
    out = []
    for rules in ("standard", "classic"):
        out += [(rules, 3, 3, 0, seed) for seed in range(25)]
        out += [(rules, 2, 4, 0, seed) for seed in range(15)]
        out += [(rules, 5, 2, 0, seed) for seed in range(10)]
        out += [(rules, 3, 4, 2, seed) for seed in range(12)]
        out += [(rules, 4, 3, 3, seed) for seed in range(8)]
        out += [(rules, 4, 4, 6 if rules == "classic" else 5, seed) for seed in range(16)]
    return out


@pytest.mark.parametrize("rules,w,h,prefix,seed", cases())
def test_solver_agrees_with_naive_minimax(rules: str, w: int, h: int, prefix: int, seed: int):
    rng = random.Random(f"{rules}-{w}x{h}-{prefix}-{seed}")
    pos = random_position(rng, rules, w, h, prefix)
    assert set(legal_destinations(pos)) == naive_moves(pos)
    wins, plies = naive_solve(pos)
    winner = pos.to_move if wins else 1 - pos.to_move
    a = analyse(pos)
    assert (a.winner, a.plies) == (winner, plies)
    assert a.moves == naive_move_values(pos)
    assert solve_winner(pos) == winner
    assert solve_length(pos) == (winner, plies)
    assert best_move(pos) == (min(a.best_moves) if a.moves else None)


def test_move_generation_agrees_on_many_random_positions():
    rng = random.Random(7)
    for i in range(400):
        rules = "classic" if i % 2 else "standard"
        w, h = rng.choice(list(DECKS))
        pos = random_position(rng, rules, w, h, rng.randrange(0, 8))
        assert set(legal_destinations(pos)) == naive_moves(pos)


def test_a_full_4x4_deal_agrees_with_naive_minimax_standard():
    # a whole deal from its first move, for the rule set with the smaller tree
    pos = parse_deal("J1234123412341J2", "standard")
    wins, plies = naive_solve(pos)
    assert solve_length(pos) == (0 if wins else 1, plies)


# -- the paper and the rules -----------------------------------------------------


def test_paper_seven_ply_red_win():
    # one of the paper's 24 deals where red forces a win in 7 plies (its
    # solver's log prints it with "R plays Point(2, 1) and gets a score of 9")
    pos = parse_deal("J3J1141223213234", "classic")
    a = analyse(pos)
    assert (a.winner, a.plies) == (0, 7)
    assert a.moves[9] == 7
    assert 9 in a.best_moves


def test_positions_with_no_move_are_lost_at_once():
    # a 2x2 board where the mover stands on a 4: no walk of 4 steps exists
    pos = Position("standard", 2, 2, (4, 1, 1, 1), 0, (0, 3), 0)
    a = analyse(pos)
    assert (a.winner, a.plies, a.moves) == (1, 0, {})


def test_a_mover_whose_only_walk_ends_on_the_other_pawn_has_lost():
    # 3x3: red on a 1 at cell 0, blue on a 1 at cell 1; cells 2, 3, 4, 6, 7 are face
    # down, so red's only step ends on blue (not a move, ruling 2) and blue, after any
    # move of red's, would be stuck too: the win search's "opponent stuck" shortcut
    # must not count that as a win
    cards = (1, 1, 2, 2, 2, 3, 1, 1, 2)
    collapsed = sum(1 << c for c in (2, 3, 4, 6, 7))
    pos = Position("standard", 3, 3, cards, collapsed, (0, 1), 0)
    assert naive_moves(pos) == set() and naive_solve(pos) == (False, 0)
    assert solve_winner(pos) == 1
    assert solve_length(pos) == (1, 0)
    assert (analyse(pos).winner, analyse(pos).plies) == (1, 0)
    assert best_move(pos) is None


def test_symmetric_deals_have_equal_values():
    rng = random.Random(3)
    deck = list(DECKS[(4, 4)])
    for _ in range(4):
        rng.shuffle(deck)
        deal = "".join(deck)
        # shift every card one column right and one row down, then mirror rows
        grid = [deal[r * 4 : r * 4 + 4] for r in range(4)]
        moved = [row[-1] + row[:-1] for row in grid]
        moved = moved[-1:] + moved[:-1]
        moved = moved[::-1]
        other = "".join(moved)
        a, b = parse_deal(deal, "standard"), parse_deal(other, "standard")
        cards_a = tuple(a.cards)
        cards_b = tuple(b.cards)
        assert canonical_deal(cards_a, 4, 4) == canonical_deal(cards_b, 4, 4)
        # the jacks may swap owners under the mirror: compare seat by cell
        if b.pawns[0] != _image(a.pawns[0]):
            b = Position(b.rules, 4, 4, b.cards, 0, (b.pawns[1], b.pawns[0]), 0)
        assert solve_length(a) == solve_length(b)


def _image(cell: int) -> int:
    r, c = divmod(cell, 4)
    r, c = (r + 1) % 4, (c + 1) % 4
    return (3 - r) * 4 + c


def test_budget_is_reported_not_guessed():
    pos = parse_deal("J" + "1234" * 17 + "J" + "12", "classic", 6, 12)
    with pytest.raises(SolverBudgetExceeded):
        solve_winner(pos, max_nodes=2000)
    solver = Solver.for_position(pos, max_nodes=10**9, max_seconds=0.05)
    with pytest.raises(SolverBudgetExceeded):
        analyse(pos, solver=solver)


def test_play_and_bad_input():
    pos = parse_deal("J1234123412341J2", "standard")
    assert sorted(legal_destinations(pos)) == [1, 3, 4, 12]
    nxt = play(pos, 1)
    assert nxt.to_move == 1 and nxt.collapsed == 1 and nxt.pawns == (1, 14)
    with pytest.raises(NotationError):
        parse_deal("J123412341234123", "standard")
    with pytest.raises(NotationError):
        parse_deal("J12341234123X1J2", "standard")
    with pytest.raises(SetupError):
        parse_deal("J1234123412341J2", "modern")


def test_one_solver_serves_a_whole_game_and_survives_its_budget():
    # a bot keeps one solver per deal: answers along a game equal fresh ones,
    # and a search cut short by its budget leaves the tables sound
    rng = random.Random(5)
    for rules in ("standard", "classic"):
        pos = random_position(rng, rules, 4, 4, 0)
        shared = Solver.for_position(pos, max_nodes=500)
        with pytest.raises(SolverBudgetExceeded):
            analyse(pos, solver=shared)
        shared.max_nodes = 10**9
        while True:
            a = analyse(pos, solver=shared)
            fresh = analyse(pos)
            assert (a.winner, a.plies, a.moves) == (fresh.winner, fresh.plies, fresh.moves)
            if not a.moves:
                break
            pos = play(pos, rng.choice(a.best_moves))
