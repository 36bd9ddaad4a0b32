"""Collecto's strong evaluation (issue 20): expected points per colour, exact at the end."""

from __future__ import annotations

import random

from engine.ai.collecto import EXPECTED_POINTS, CollectoState, ExpectingState
from engine.base import new_game
from engine.collecto import board as B


def test_expected_points_by_hand() -> None:
    assert EXPECTED_POINTS[0, 0] == 0.0  # eight balls left, split evenly on average
    assert EXPECTED_POINTS[2, 6] == -2.0  # none left: the points as they stand
    # one left: it completes my three (1-1) or gives them a sixth ball (0-2): -1 on average
    assert EXPECTED_POINTS[2, 5] == -1.0
    assert EXPECTED_POINTS[3, 3] == 0.0
    for (m, t), v in EXPECTED_POINTS.items():
        assert EXPECTED_POINTS[t, m] == -v
        if m + t == B.BALLS_PER_COLOUR:
            assert v == m // 3 - t // 3


def test_the_evaluation_counts_expected_points_and_the_end_stays_exact() -> None:
    game = new_game("collecto", seed=4)
    rng = random.Random(1)
    plain, expecting = CollectoState(game), ExpectingState(game)
    differed = False
    while plain.moves():
        move = rng.choice(plain.moves())
        plain.push(move)
        expecting.push(move)
        assert expecting.margin() == plain.evaluate()
        differed |= expecting.evaluate() != plain.evaluate()
    assert differed
    assert expecting.final() == plain.final()
