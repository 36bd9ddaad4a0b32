"""Glicko-2 (server/ratings.py) against the worked example in Glickman's paper."""

from __future__ import annotations

import pytest

from engine.base import Result
from server.ratings import Rating, pair_scores, rate_game, update


def test_glickman_worked_example() -> None:
    player = Rating(1500, 200, 0.06)
    games = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    new = update(player, games, tau=0.5)
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.rd == pytest.approx(151.52, abs=0.01)
    assert new.vol == pytest.approx(0.05999, abs=0.00001)
    assert new.games == 3


def test_no_games_only_widens_the_deviation() -> None:
    new = update(Rating(1500, 200, 0.06), [])
    assert new.rating == 1500 and new.rd == pytest.approx(200.27, abs=0.01)


def test_two_player_game_moves_ratings_apart_symmetrically() -> None:
    a, b = rate_game([Rating(), Rating()], Result(1, (1, 0), "no_moves"))
    assert b.rating > 1500 > a.rating
    assert b.rating - 1500 == pytest.approx(1500 - a.rating)
    assert a.games == b.games == 1


def test_draw_between_equals_changes_no_rating() -> None:
    a, b = rate_game([Rating(), Rating()], Result(None, (0, 1), "score", (4, 4)))
    assert a.rating == pytest.approx(1500) and b.rating == pytest.approx(1500)


def test_three_players_by_finishing_order() -> None:
    scores = pair_scores(Result(2, (2, 0, 1), "no_moves"), 3)
    assert scores[2] == [(0, 1.0), (1, 1.0)]
    assert scores[0] == [(1, 1.0), (2, 0.0)]
    first, second, third = (
        rate_game([Rating()] * 3, Result(2, (2, 0, 1), "no_moves"))[i] for i in (2, 0, 1)
    )
    assert first.rating > second.rating > third.rating


def test_rating_round_trips_through_dicts() -> None:
    r = Rating(1612.5, 80.25, 0.0599, 7)
    assert Rating.from_dict(r.to_dict()) == r
    assert Rating.from_dict(None) == Rating()
