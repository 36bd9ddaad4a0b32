"""Glicko-2 ratings, one rating per player per game (Glickman, "Example of the Glicko-2 system").

Each finished rated game is its own rating period. A game of more than two
players counts as every pair of seats playing each other, the better finishing
place winning (a draw where the result names no order between them).
Pure functions; the server stores ratings through presence.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from engine.base import Result

#: Glicko-2 scale factor between the Glicko and Glicko-2 scales
SCALE = 173.7178
#: the system constant: how much volatility may change (Glickman suggests 0.3-1.2)
TAU = 0.5
EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class Rating:
    rating: float = 1500.0
    rd: float = 350.0
    vol: float = 0.06
    games: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Rating:
        if not data:
            return cls()
        return cls(
            float(data["rating"]),
            float(data.get("rd", 350.0)),
            float(data.get("vol", 0.06)),
            int(data.get("games", 0)),
        )


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def update(player: Rating, games: list[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The player's rating after one period with ``(opponent, score)`` games (score 1, 0.5, 0)."""
    mu = (player.rating - 1500.0) / SCALE
    phi = player.rd / SCALE
    if not games:  # step 6 only: the deviation grows
        phi_star = math.sqrt(phi * phi + player.vol * player.vol)
        return Rating(player.rating, min(phi_star * SCALE, 350.0), player.vol, player.games)
    v_inv = 0.0
    delta_sum = 0.0
    for opp, score in games:
        mu_j = (opp.rating - 1500.0) / SCALE
        g = _g(opp.rd / SCALE)
        e = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
        v_inv += g * g * e * (1.0 - e)
        delta_sum += g * (score - e)
    v = 1.0 / v_inv
    delta = v * delta_sum
    # step 5: the new volatility, by the Illinois algorithm
    a = math.log(player.vol * player.vol)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    vol = math.exp(big_a / 2.0)
    phi_star = math.sqrt(phi * phi + vol * vol)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * delta_sum
    return Rating(mu_new * SCALE + 1500.0, phi_new * SCALE, vol, player.games + len(games))


def pair_scores(result: Result, seats: int) -> list[list[tuple[int, float]]]:
    """For each seat, its ``(opponent seat, score)`` games implied by ``result``."""
    if result.winner is None or sorted(result.order) != list(range(seats)):
        place = dict.fromkeys(range(seats), 0)  # a draw: everyone equal
    else:
        place = {seat: i for i, seat in enumerate(result.order)}
    out: list[list[tuple[int, float]]] = [[] for _ in range(seats)]
    for a in range(seats):
        for b in range(seats):
            if a != b:
                pa, pb = place[a], place[b]
                out[a].append((b, 1.0 if pa < pb else 0.0 if pa > pb else 0.5))
    return out


def rate_game(ratings: list[Rating], result: Result) -> list[Rating]:
    """New ratings of every seat after one game, all computed from the old ones."""
    games = pair_scores(result, len(ratings))
    return [
        update(r, [(ratings[opp], score) for opp, score in games[seat]])
        for seat, r in enumerate(ratings)
    ]
