"""What to play next: the format's rounds turned into groups of games.

A *group* is one deal of one encounter; it holds one game per seat order, and
its games are committed together (a game pair in two-player games, the unit of
the pentanomial statistics). :class:`Planner` hands out batches of groups; a
batch depends only on the groups committed before it, so a resumed run plans
exactly what the interrupted one did, and finished games are simply found
instead of played.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from clients.tournament import pairings
from clients.tournament.config import TournamentConfig
from clients.tournament.play import GameSpec
from clients.tournament.standings import seat_points


def derive_seed(*parts: object) -> int:
    """A 31-bit seed from its parts, the same in every process (SHA-512 of the text)."""
    return random.Random("/".join(map(str, parts))).getrandbits(31)


@lru_cache(maxsize=1 << 14)
def _deal_seed(seed: int, round: int, deal: int) -> int:
    """A deal's seed: every encounter of a round plays the same deals (kept, since
    deriving one costs more than a fast game's bookkeeping)."""
    return derive_seed(seed, "deal", round, deal)


@dataclass(frozen=True, slots=True)
class Group:
    round: int
    encounter: int
    deal: int
    players: tuple[int, ...]

    @property
    def key(self) -> str:
        return f"{self.round}.{self.encounter}.{self.deal}"

    def ids(self) -> list[str]:
        """Its games' ids, one per seat order (as :meth:`games` numbers them)."""
        key = self.key
        return [f"{key}.{perm}" for perm in range(math.factorial(len(self.players)))]

    def games(self, config: TournamentConfig) -> list[GameSpec]:
        number = self.round * config.deals + self.deal
        setup = config.setups[number % len(config.setups)] if config.setups else None
        deal_seed = None if setup else _deal_seed(config.seed, self.round, self.deal)
        return [
            GameSpec(
                id=f"{self.key}.{perm}",
                round=self.round,
                encounter=self.encounter,
                deal=self.deal,
                perm=perm,
                seats=order,
                game=config.game,
                rules=config.rules,
                variant=config.variant,
                deal_seed=deal_seed,
                setup=setup,
                tcs=tuple(config.participants[p].tc or config.tc for p in order),
                move_timeout_ms=config.move_timeout_ms,
                adjudicate=config.adjudicate,
            )
            for perm, order in enumerate(pairings.seat_orders(self.players))
        ]


def group_points(group: list[dict[str, Any]]) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for line in group:
        for seat, pts in enumerate(seat_points(line)):
            out[line["tournament"]["seats"][seat]] += pts
    return out


class Planner:
    """Batches of groups for ``config``'s format; :meth:`next_batch` is given every
    group committed so far (key -> its lines) and returns [] when the tournament is over."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.n = len(config.participants)
        self.round = 0
        self.batch: list[Group] = []
        self._extra: dict[int, int] = {}  # knockout: tiebreak deals played per encounter
        self._alive = list(range(self.n))
        self._scores = [0.0] * self.n
        self._met: set[frozenset[int]] = set()
        self._byes: set[int] = set()

    def winner(self) -> int | None:
        """The knockout's winner once its final is decided."""
        if self.config.format == "knockout" and len(self._alive) == 1:
            return self._alive[0]
        return None

    def total_rounds(self) -> int:
        c = self.config
        if c.format in ("round-robin", "gauntlet"):
            return c.cycles
        if c.format == "swiss":
            return c.rounds or max(1, math.ceil(math.log2(self.n)))
        return max(1, math.ceil(math.log2(self.n)))

    def estimated_games(self) -> int:
        c = self.config
        perms = math.factorial(c.seats)
        if c.format == "round-robin":
            enc = len(pairings.round_robin(self.n, c.seats))
        elif c.format == "gauntlet":
            enc = len(pairings.gauntlet(self.n, c.seats, c.gauntlet_seeds))
        elif c.format == "swiss":
            enc = self.n // 2
        else:
            return (self.n - 1) * c.deals * perms
        return self.total_rounds() * enc * c.deals * perms

    def next_batch(self, committed: dict[str, list[dict[str, Any]]]) -> list[Group]:
        c = self.config
        if c.format == "knockout" and self.batch:
            ties = self._knockout_ties(committed)
            if ties:
                self.batch = ties
                return ties
        if self.batch and c.format == "swiss":
            self._score_swiss(committed)
        if self.round >= self.total_rounds() or (c.format == "knockout" and len(self._alive) < 2):
            return []
        encounters = self._encounters(committed)
        self.batch = [
            Group(self.round, e, d, enc)
            for e, enc in enumerate(encounters)
            if len(enc) > 1
            for d in range(c.deals)
        ]
        self.round += 1
        if not self.batch:
            return self.next_batch(committed)
        return self.batch

    # -- formats --------------------------------------------------------------------
    def _encounters(self, committed: dict[str, list[dict[str, Any]]]) -> list[tuple[int, ...]]:
        c = self.config
        if c.format == "round-robin":
            return pairings.round_robin(self.n, c.seats)
        if c.format == "gauntlet":
            return pairings.gauntlet(self.n, c.seats, c.gauntlet_seeds)
        if c.format == "swiss":
            pairs, bye = pairings.swiss_round(self._scores, self._met, self._byes)
            if bye is not None:
                self._byes.add(bye)
                self._scores[bye] += 1
            self._met.update(frozenset(p) for p in pairs)
            return list(pairs)
        if self.round == 0:
            return list(pairings.knockout_first_round(self.n))
        return pairings.knockout_next_round(self._alive)

    def _encounter_points(
        self, committed: dict[str, list[dict[str, Any]]], rnd: int, enc: int
    ) -> dict[int, float]:
        total: dict[int, float] = defaultdict(float)
        prefix = f"{rnd}.{enc}."
        for key, lines in committed.items():
            if key.startswith(prefix):
                for p, pts in group_points(lines).items():
                    total[p] += pts
        return total

    def _score_swiss(self, committed: dict[str, list[dict[str, Any]]]) -> None:
        seen = {(g.round, g.encounter): g.players for g in self.batch}
        for (rnd, enc), (a, b) in seen.items():
            pts = self._encounter_points(committed, rnd, enc)
            if pts[a] == pts[b]:
                self._scores[a] += 0.5
                self._scores[b] += 0.5
            else:
                self._scores[a if pts[a] > pts[b] else b] += 1

    def _knockout_ties(self, committed: dict[str, list[dict[str, Any]]]) -> list[Group]:
        """Tiebreak deals for tied encounters of the round just played, or (no ties
        left) the round's winners in ``_alive``."""
        rnd = self.round - 1
        encounters = (
            pairings.knockout_first_round(self.n)
            if rnd == 0
            else pairings.knockout_next_round(self._alive)
        )
        winners, ties = [], []
        for e, enc in enumerate(encounters):
            if len(enc) == 1:
                winners.append(enc[0])
                continue
            a, b = enc
            pts = self._encounter_points(committed, rnd, e)
            extra = self._extra.get(e, 0)
            if pts[a] == pts[b] and extra < self.config.tiebreak_pairs:
                self._extra[e] = extra + 1
                ties.append(Group(rnd, e, self.config.deals + extra, enc))
            winners.append(a if pts[a] >= pts[b] else b)  # a tie left: the higher seed
        if ties:
            return ties
        self._alive = winners
        self._extra = {}
        self.batch = []
        return []
