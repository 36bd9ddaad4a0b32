"""Random Collecto play against a plain reference model of the rules (rulings 11-14).

The reference below works on a 7x7 grid of lists, pushes by rebuilding the
line, and checks the whole board for pairs after every push; it shares no
code or tables with the engine, so the two have to agree on their own.
"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import GameRecord, replay
from engine.collecto import CollectoGame

Grid = list[list[int]]


def to_grid(cells: str) -> Grid:
    return [[int(ch) for ch in cells[r * 7 : r * 7 + 7]] for r in range(7)]


def ref_push(grid: Grid, move: int) -> Grid | None:
    """The grid after push ``move``, or None if it changes nothing."""
    kind, i = divmod(move, 7)
    out = [row[:] for row in grid]
    line = grid[i][:] if kind < 2 else [grid[r][i] for r in range(7)]
    balls = [v for v in line if v]
    gap = [0] * (7 - len(balls))
    new = balls + gap if kind in (0, 2) else gap + balls
    if new == line:
        return None
    for j, v in enumerate(new):
        if kind < 2:
            out[i][j] = v
        else:
            out[j][i] = v
    return out


def ref_paired(grid: Grid) -> set[tuple[int, int]]:
    """Every ball with an orthogonal neighbour of its colour."""
    found = set()
    for r in range(7):
        for c in range(7):
            v = grid[r][c]
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                rr, cc = r + dr, c + dc
                if v and 0 <= rr < 7 and 0 <= cc < 7 and grid[rr][cc] == v:
                    found.add((r, c))
    return found


def ref_legal(grid: Grid) -> list[str]:
    singles = [m for m in range(28) if (g := ref_push(grid, m)) is not None and ref_paired(g)]
    if singles:
        return [str(m) for m in singles]
    doubles = []
    for a in range(28):
        first = ref_push(grid, a)
        if first is None:
            continue
        for b in range(28):
            second = ref_push(first, b)
            if second is not None and ref_paired(second):
                doubles.append(f"{a},{b}")
    return doubles


def ref_apply(grid: Grid, move: str) -> tuple[Grid, list[int]]:
    for m in map(int, move.split(",")):
        grid = ref_push(grid, m)
        assert grid is not None
    taken = [0] * 7
    for r, c in ref_paired(grid):
        taken[grid[r][c]] += 1
    for r, c in ref_paired(grid):
        grid[r][c] = 0
    return grid, taken


def total(collected: dict[str, int]) -> int:
    return sum(collected.values())


def play_checked(game: CollectoGame, rng: random.Random) -> None:
    """Play random legal moves to the end, checking every step against the reference."""
    start_balls = sum(1 for ch in game.position() if ch != "0")
    for _ in range(30):  # each move takes at least two balls, so at most 24 moves
        legal = ref_legal(to_grid(game.position()))
        assert game.legal_moves() == legal
        if not legal:
            break
        move = rng.choice(legal)
        seat = game.to_move()
        before = [total(game.collected(s)) for s in (0, 1)]
        expected, taken = ref_apply(to_grid(game.position()), move)
        game.play(move)
        assert to_grid(game.position()) == expected
        assert not ref_paired(expected)  # every ball with a same-coloured neighbour went
        assert sum(taken) >= 2
        after = [total(game.collected(s)) for s in (0, 1)]
        assert after[seat] - before[seat] == sum(taken)  # all of it to the mover
        assert after[1 - seat] == before[1 - seat]
        on_board = sum(1 for ch in game.position() if ch != "0")
        assert on_board + sum(after) == start_balls  # every ball accounted for
    assert game.is_over() and game.legal_moves() == [] and game.to_move() is None
    pts = [sum(n // 3 for n in game.collected(s).values()) for s in (0, 1)]  # ruling 14
    balls = [total(game.collected(s)) for s in (0, 1)]
    res = game.result()
    assert res.scores == tuple(pts)
    if (pts[0], balls[0]) == (pts[1], balls[1]):
        assert res.winner is None
    else:
        assert res.winner == max((0, 1), key=lambda s: (pts[s], balls[s]))


def assert_replays(game: CollectoGame) -> None:
    record = game.record()
    again = replay(record)
    assert again.position() == game.position()
    assert again.history == game.history
    assert again.result() == game.result()
    assert again.view() == game.view()
    wire = GameRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert replay(wire).view() == game.view()
    restored = CollectoGame.restore(json.loads(json.dumps(game.snapshot())))
    assert restored.view() == game.view()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**40), choices=st.randoms(use_true_random=False))
def test_random_play_from_a_deal_follows_the_rules_and_replays(
    seed: int, choices: random.Random
) -> None:
    game = CollectoGame.new(seed=seed)
    assert game.position().count("0") == 1
    play_checked(game, choices)
    assert len(game.history) <= 24
    assert sum(game.balls()) + (49 - game.position().count("0")) == 48
    assert_replays(game)


def sparse_board(rng: random.Random, balls: int) -> str:
    """A random board of up to ``balls`` balls, at most 8 per colour, no touching pair."""
    cells = [0] * 49
    left = [0] + [8] * 6
    for cell in rng.sample(range(49), balls):
        r, c = divmod(cell, 7)
        near = {
            cells[rr * 7 + cc]
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= rr < 7 and 0 <= cc < 7
        }
        options = [k for k in range(1, 7) if left[k] and k not in near]
        if options:
            cells[cell] = rng.choice(options)
            left[cells[cell]] -= 1
    return "".join(map(str, cells))


@settings(max_examples=60, deadline=None)
@given(rng=st.randoms(use_true_random=False), balls=st.integers(0, 30))
def test_random_positions_follow_the_rules_and_replay(rng: random.Random, balls: int) -> None:
    game = CollectoGame.from_setup(sparse_board(rng, balls))
    play_checked(game, rng)
    assert_replays(game)


def test_copies_are_independent() -> None:
    game = CollectoGame.new(seed=9)
    twin = game.copy()
    game.play(game.legal_moves()[0])
    assert twin.history == [] and twin.position() == game.setup()
    assert twin.view()["balls"] == [0, 0]
