"""Perft: counts of complete games computed twice and compared.

Once by the engine (bit masks, precomputed step tables, play/undo) and once
by a deliberately naive enumerator written here from the rules texts: a
nested-list grid, coordinates, and a recursive walk over every path. They
share no code, so a bug in the step tables or the move rules shows up as a
different count.
"""

from __future__ import annotations

import random

import pytest

from engine.collapsi import CollapsiGame

# -- the naive reference: rules texts only -------------------------------------------------


def naive_grid(deal: str) -> list[list[str]]:
    size = int(len(deal) ** 0.5)
    return [list(deal[r * size : (r + 1) * size]) for r in range(size)]


def naive_destinations(grid, collapsed, pawns, mover, rules):
    """Every cell the mover can end on: walks of exactly N orthogonal steps on the
    torus, never entering a card twice (the start counts), never a face-down card,
    ending neither on the start nor on another pawn."""
    h, w = len(grid), len(grid[0])
    start = pawns[mover]
    card = grid[start[0]][start[1]]
    jack_steps = [1, 2, 3, 4] if rules == "classic" else [1]
    lengths = jack_steps if card == "J" else [int(card)]
    found = set()

    def walk(path, left):
        if left == 0:
            end = path[-1]
            if end != start and end not in pawns:
                found.add(end)
            return
        r, c = path[-1]
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            nxt = ((r + dr) % h, (c + dc) % w)
            if nxt in path or nxt in collapsed:
                continue
            walk([*path, nxt], left - 1)

    for n in lengths:
        walk([start], n)
    return sorted(found)


def naive_count(grid, collapsed, pawns, mover, rules, depth=None):
    """Number of complete games (or of lines of ``depth`` plies) from this position."""
    if depth == 0:
        return 1
    dests = naive_destinations(grid, collapsed, pawns, mover, rules)
    if not dests:
        return 1  # the mover cannot move: the game is over
    total = 0
    for d in dests:
        new_pawns = list(pawns)
        new_pawns[mover] = d
        total += naive_count(
            grid,
            collapsed | {pawns[mover]},
            new_pawns,
            1 - mover,
            rules,
            None if depth is None else depth - 1,
        )
    return total


def naive_start(deal: str, moves: list[int]):
    grid = naive_grid(deal)
    w = len(grid[0])
    jacks = [(r, c) for r in range(len(grid)) for c in range(w) if grid[r][c] == "J"]
    pawns = jacks[:2]
    collapsed: set = set()
    mover = 0
    for m in moves:
        collapsed = collapsed | {pawns[mover]}
        pawns = list(pawns)
        pawns[mover] = divmod(m, w)
        mover = 1 - mover
    return grid, collapsed, pawns, mover


# -- the engine ---------------------------------------------------------------------------


def engine_count(game: CollapsiGame, depth: int | None = None) -> int:
    if depth == 0 or game.is_over():
        return 1
    total = 0
    for d in list(game.legal_cells()):
        game.play_cell(d)
        total += engine_count(game, None if depth is None else depth - 1)
        game.undo()
    return total


def seeded_opening(rules: str, seed: int, plies: int) -> tuple[CollapsiGame, list[int]]:
    game = CollapsiGame.new(rules=rules, seed=seed)
    rng = random.Random(seed)
    moves = []
    for _ in range(plies):
        d = rng.choice(game.legal_cells())
        moves.append(d)
        game.play_cell(d)
    return game, moves


@pytest.mark.parametrize("rules", ["standard", "classic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complete_game_counts_agree_with_naive_enumerator(rules: str, seed: int) -> None:
    game, moves = seeded_opening(rules, seed, 2)
    expected = naive_count(*naive_start(game.setup(), moves), rules)
    assert expected > 50  # a real tree, not a trivial one
    before = game.position()
    assert engine_count(game) == expected
    assert game.position() == before  # undo restored everything


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_perft_from_the_deal_agrees_with_naive_enumerator(rules: str) -> None:
    game = CollapsiGame.new(rules=rules, seed=5)
    start = naive_start(game.setup(), [])
    for depth in (1, 2, 3):
        assert engine_count(game, depth) == naive_count(*start, rules, depth=depth)


def test_naive_reference_on_a_hand_checked_deal() -> None:
    # red on cell 2 of 41J1/2431/3J32/2123 has the four torus neighbours
    grid, collapsed, pawns, mover = naive_start("41J124313J322123", [])
    assert naive_destinations(grid, collapsed, pawns, mover, "standard") == [
        (0, 1),
        (0, 3),
        (1, 2),
        (3, 2),
    ]


# -- Shifting Board (ruling 5), with its own naive rotation ---------------------------------------


def naive_shift_apply(grid, down, pawns, mover, dest, shift):
    """Move the mover to ``dest``, collapse its start, then rotate by list slicing."""
    h, w = len(grid), len(grid[0])
    g = [row[:] for row in grid]
    d = [row[:] for row in down]
    sr, sc = pawns[mover]
    d[sr][sc] = True
    ps = list(pawns)
    ps[mover] = dest
    r, c = dest
    if shift in "<>":
        k = -1 if shift == "<" else 1
        g[r] = g[r][-1:] + g[r][:-1] if k == 1 else g[r][1:] + g[r][:1]
        d[r] = d[r][-1:] + d[r][:-1] if k == 1 else d[r][1:] + d[r][:1]
        ps = [(pr, (pc + k) % w) if pr == r else (pr, pc) for pr, pc in ps]
    else:
        k = -1 if shift == "^" else 1
        col_g = [g[i][c] for i in range(h)]
        col_d = [d[i][c] for i in range(h)]
        for i in range(h):
            g[(i + k) % h][c] = col_g[i]
            d[(i + k) % h][c] = col_d[i]
        ps = [((pr + k) % h, pc) if pc == c else (pr, pc) for pr, pc in ps]
    return g, d, ps


def naive_shift_lines(grid, down, pawns, mover, rules, depth):
    """Lines of ``depth`` plies in Shifting Board: every (destination, shift) pair.

    ``down`` is a nested list of booleans (collapsed cards); cards, gaps and pawns
    are rotated together, by list slicing.
    """
    if depth == 0:
        return 1
    h, w = len(grid), len(grid[0])
    collapsed = {(r, c) for r in range(h) for c in range(w) if down[r][c]}
    dests = naive_destinations(grid, collapsed, pawns, mover, rules)
    if not dests:
        return 1
    total = 0
    for dest in dests:
        for shift in "<>^v":
            g, d, ps = naive_shift_apply(grid, down, pawns, mover, dest, shift)
            total += naive_shift_lines(g, d, ps, 1 - mover, rules, depth - 1)
    return total


def engine_shift_lines(game: CollapsiGame, depth: int) -> int:
    if depth == 0 or game.is_over():
        return 1
    total = 0
    for move in game.legal_moves():
        game.play(move)
        total += engine_shift_lines(game, depth - 1)
        game.undo()
    return total


@pytest.mark.parametrize("rules", ["standard", "classic"])
def test_ruling_5_shifting_perft_agrees_with_naive_rotation(rules: str) -> None:
    game = CollapsiGame.new(rules=rules, variant="shifting", seed=9)
    rng = random.Random(9)
    for _ in range(2):  # a couple of plies in, so gaps exist and travel
        game.play(rng.choice(game.legal_moves()))
    pos = game.to_position()
    grid = [["J1234"[pos.cards[r * 4 + c]] for c in range(4)] for r in range(4)]
    down = [[bool(pos.collapsed >> (r * 4 + c) & 1) for c in range(4)] for r in range(4)]
    pawns = [divmod(p, 4) for p in pos.pawns]
    depth = 2 if rules == "classic" else 3
    expected = naive_shift_lines(grid, down, pawns, pos.to_move, rules, depth)
    assert expected > 100
    assert engine_shift_lines(game, depth) == expected
    # and each single move lands on the same board as the naive rotation
    for move in game.legal_moves():
        dest, shift = divmod(int(move[:-1]), 4), move[-1]
        g, d, ps = naive_shift_apply(grid, down, pawns, pos.to_move, dest, shift)
        after = game.copy()
        after.play(move)
        got = after.to_position()
        assert [["J1234"[got.cards[r * 4 + c]] for c in range(4)] for r in range(4)] == g
        assert [[bool(got.collapsed >> (r * 4 + c) & 1) for c in range(4)] for r in range(4)] == d
        assert [divmod(p, 4) for p in got.pawns] == ps, move
