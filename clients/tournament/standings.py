"""Standings, crosstable and Elo from finished games.

A game's points: the winner of a two-player game 1, a draw 1/2 each; in a 3-4
player game a seat scores by finishing place, (players - 1 - place) / (players -
1) (ruling 3: ranked by elimination time). Every two participants of a game also
meet head to head: the one who finished ahead wins that duel. The crosstable
and, for games of three or more, the Elo figures come from these duels (games
taken as independent: trinomial); in two-player games Elo comes from the
pentanomial counts of the deal pairs, each deal played once per seat order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from clients.tournament.elo import EloEstimate, StatsError, pair_bucket, pentanomial, trinomial


def seat_points(line: dict[str, Any]) -> list[float]:
    """Points per seat of a finished game line."""
    result = line["result"]
    seats = len(line["players"])
    if result["winner"] is None:
        return [0.5] * seats
    if seats == 2:
        return [1.0 if s == result["winner"] else 0.0 for s in range(seats)]
    points = [0.0] * seats
    for place, seat in enumerate(result["order"]):
        points[seat] = (seats - 1 - place) / (seats - 1)
    return points


def duels(line: dict[str, Any]) -> list[tuple[int, int, float]]:
    """``(a, b, score of a)`` for every two participants of the game (by participant index)."""
    who = line["tournament"]["seats"]
    points = seat_points(line)
    out = []
    for i in range(len(who)):
        for j in range(i + 1, len(who)):
            pi, pj = points[i], points[j]
            out.append((who[i], who[j], 1.0 if pi > pj else 0.0 if pi < pj else 0.5))
    return out


@dataclass(slots=True)
class Row:
    """One participant's line of the standings."""

    index: int
    name: str
    games: int = 0
    points: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    penta: list[int] = field(default_factory=lambda: [0] * 5)
    estimate: EloEstimate | None = None

    def to_dict(self) -> dict[str, Any]:
        est = self.estimate.to_dict() if self.estimate else {}
        return {
            "name": self.name,
            "games": self.games,
            "points": self.points,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "penta": list(self.penta),
            **{k: est.get(k) for k in ("elo", "elo_error", "nelo", "nelo_error", "los")},
            "draw_ratio": est.get("draw_ratio"),
        }


@dataclass(slots=True)
class Standings:
    rows: list[Row]
    #: cross[a][b]: [points of a against b, games]
    cross: list[list[list[float]]]

    def ranked(self) -> list[Row]:
        return sorted(
            self.rows, key=lambda r: (-r.points, -(r.estimate.score if r.estimate else 0), r.index)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "standings": [r.to_dict() for r in self.ranked()],
            "crosstable": {
                a.name: {
                    b.name: {
                        "points": self.cross[a.index][b.index][0],
                        "games": int(self.cross[a.index][b.index][1]),
                    }
                    for b in self.rows
                    if self.cross[a.index][b.index][1]
                }
                for a in self.rows
            },
        }


class Tally:
    """Standings kept up to date group by group (each group is added once, when it is
    committed), so asking for them while a long tournament runs costs the same after
    ten games as after a million."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self._rows = [Row(i, n) for i, n in enumerate(names)]
        self._cross = [[[0.0, 0.0] for _ in names] for _ in names]
        self._tri = [[0, 0, 0] for _ in names]
        self._paired = True

    def add(self, group: list[dict[str, Any]]) -> None:
        """One complete group (every seat order of one deal of one encounter: a pair in
        two-player games)."""
        rows = self._rows
        pair_points: dict[int, float] = defaultdict(float)
        for line in group:
            who = line["tournament"]["seats"]
            if len(who) == 2:  # the common case, without the general helpers' lists
                winner = line["result"]["winner"]
                first = 0.5 if winner is None else 1.0 - winner  # seat 0's points
                points = [first, 1.0 - first]
                duels_of = [(who[0], who[1], first)]
            else:
                self._paired = False
                points = seat_points(line)
                duels_of = duels(line)
            for seat, pts in enumerate(points):
                row = rows[who[seat]]
                row.games += 1
                row.points += pts
                pair_points[who[seat]] += pts
            for a, b, score in duels_of:
                self._duel(a, b, score)
                self._duel(b, a, 1 - score)
        if self._paired and len(group) == 2:
            for p, pts in pair_points.items():
                rows[p].penta[pair_bucket(pts)] += 1

    def _duel(self, x: int, y: int, score: float) -> None:
        self._cross[x][y][0] += score
        self._cross[x][y][1] += 1
        self._tri[x][_TRI[score]] += 1
        row = self._rows[x]
        row.wins += score == 1.0
        row.draws += score == 0.5
        row.losses += score == 0.0

    def standings(self) -> Standings:
        """The table now, with each participant's Elo estimate (a copy: adding more
        groups later does not change it)."""
        rows = [replace(r, penta=list(r.penta)) for r in self._rows]
        for row in rows:
            try:
                if self._paired and sum(row.penta):
                    row.estimate = pentanomial(tuple(row.penta))  # type: ignore[arg-type]
                elif sum(self._tri[row.index]):
                    row.estimate = trinomial(tuple(self._tri[row.index]))  # type: ignore[arg-type]
            except StatsError:
                row.estimate = None
        return Standings(rows, [[list(c) for c in line] for line in self._cross])


_TRI = {0.0: 0, 0.5: 1, 1.0: 2}


def compute(names: list[str], groups: list[list[dict[str, Any]]]) -> Standings:
    """Standings of ``names`` from complete groups (see :meth:`Tally.add`)."""
    tally = Tally(names)
    for group in groups:
        tally.add(group)
    return tally.standings()
