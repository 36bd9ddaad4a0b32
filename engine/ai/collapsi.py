"""Collapsi players: greedy (mobility), MCTS and perfect (the solver).

Every variant is played through the game's own move generation
(:meth:`CollapsiGame.legal_cells`, :meth:`~CollapsiGame.play_cell`,
:meth:`~CollapsiGame.undo`), so Big Board with 3-4 players, Shifting Board
(a move is a destination plus a shift), Player's Choice (the first moves
place the pawns), custom decks, both rule sets and the solo puzzle all work
for every level.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable

from engine.ai.mcts import mcts
from engine.ai.player import Player
from engine.base import Game, Result, SetupError
from engine.clock import cpu_now
from engine.collapsi import solo
from engine.collapsi.board import SHIFTS
from engine.collapsi.game import CollapsiGame
from engine.collapsi.position import Position
from engine.collapsi.solver import (
    Solver,
    SolverBudgetExceeded,
    analyse,
    tables_for,
)

Move = tuple[int, int]  # (destination cell, shift index or -1)

#: solver positions a perfect player may store per move when it has no time budget
PERFECT_MAX_NODES = 200_000
#: share of a time budget the perfect player gives the solver before falling back
PERFECT_SOLVER_SHARE = 0.6


def _check(game: Game) -> CollapsiGame:
    if not isinstance(game, CollapsiGame):
        raise SetupError(f"a Collapsi player cannot play {game.name}")
    return game


def notation(move: Move) -> str:
    dest, shift = move
    return f"{dest}{SHIFTS[shift]}" if shift >= 0 else str(dest)


def rewards(result: Result, players: int) -> tuple[float, ...]:
    """Reward per seat in [0, 1]: by finishing order (ruling 3); solo: 1 if solved."""
    if players == 1:
        return (1.0 if result.reason == "solved" else 0.0,)
    out = [0.0] * players
    for rank, seat in enumerate(result.order):
        out[seat] = (players - 1 - rank) / (players - 1)
    return tuple(out)


class CollapsiState:
    """A private copy of a game, driven by cell moves with undo (for search)."""

    def __init__(self, game: CollapsiGame) -> None:
        self.game = game.copy()
        self.players = game.num_players
        self.shifting = "shifting" in game.variant
        self.choice = "players-choice" in game.variant

    def moves(self) -> list[Move]:
        g = self.game
        if g.result() is not None:
            return []
        cells = g.legal_cells()
        if self.shifting and not (self.choice and g.steps() == "place"):
            return [(d, s) for d in cells for s in range(4)]
        return [(d, -1) for d in cells]

    def push(self, move: Hashable) -> None:
        self.game.play_cell(*move)  # type: ignore[misc]

    def pop(self) -> None:
        self.game.undo()

    def mover(self) -> int:
        return self.game.to_move()  # type: ignore[return-value]

    def rewards(self) -> tuple[float, ...]:
        return rewards(self.game.result(), self.players)  # type: ignore[arg-type]


def mobility(pos: Position, seat: int) -> int:
    """How many destinations ``seat``'s pawn has in ``pos`` (0 if unplaced or out).

    The solo exit is not treated specially: this is a heuristic.
    """
    cell = pos.pawns[seat]
    if cell < 0:
        return 0
    t = tables_for(pos.width, pos.height, pos.rules)
    taken = {p for p in pos.pawns if p >= 0}
    return sum(1 for d in t.dests(cell, pos.cards[cell], pos.collapsed) if d not in taken)


class GreedyPlayer(Player):
    """One ply of lookahead: own moves minus the opponents' moves after the move.

    A move that wins at once scores best, one that loses at once (the solo exit
    touched too early) worst. Ties are broken at random.
    """

    level = "greedy"

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        state = CollapsiState(_check(game))
        me = state.mover()
        best: list[Move] = []
        best_score = -math.inf
        for move in state.moves():
            state.push(move)
            result = state.game.result()
            if result is not None:
                score = 1000.0 * (rewards(result, state.players)[me] - 0.5)
            else:
                pos = state.game.to_position()
                score = float(mobility(pos, me))
                score -= sum(mobility(pos, s) for s in range(state.players) if s != me)
            state.pop()
            if score > best_score:
                best_score = score
                best = [move]
            elif score == best_score:
                best.append(move)
        return notation(rng.choice(best))


class MctsPlayer(Player):
    """UCT with random playouts (max-n for 3-4 players); budget in playouts or time."""

    level = "mcts"

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        state = CollapsiState(_check(game))
        move, _stats = mcts(state, rng, self.iterations, deadline)
        return notation(move)  # type: ignore[arg-type]


class PerfectPlayer(Player):
    """Perfect play from the solvers where they apply, MCTS elsewhere.

    - Two players, fixed cards (not Shifting Board), both pawns placed: the
      game-length-perfect moves of :mod:`engine.collapsi.solver` (a won
      position is won by the shortest win, a lost one is prolonged).
    - Player's Choice with two players: the start card is chosen by solving
      every pair of start cards (the second player takes a winning start if
      there is one; the first takes a start that leaves the second player the
      fewest winning replies, none if it can).
    - Solo puzzles (not Shifting Board): a winning line of
      :mod:`engine.collapsi.solo`.
    - Everything else, and whenever a solver gives up (its node budget, or a
      share of the time budget, is spent: a big board early on) or finds no
      win to play for in the placement: MCTS with the same budget. That covers
      3-4 players and Shifting Board.
    """

    level = "perfect"

    def __init__(
        self,
        seed: int = 0,
        budget_ms: int | None = None,
        iterations: int | None = None,
        max_nodes: int = PERFECT_MAX_NODES,
    ) -> None:
        super().__init__(seed, budget_ms, iterations)
        self.max_nodes = max_nodes
        #: how the last move was chosen: "solver" or "search" (for tests and logs)
        self.last_source = ""

    def _solver(self, game: CollapsiGame, deadline: float) -> Solver:
        pos = game.to_position()
        seconds = None
        if deadline != math.inf:
            seconds = max(0.0, (deadline - cpu_now()) * PERFECT_SOLVER_SHARE)
        return Solver(
            pos.rules,
            pos.width,
            pos.height,
            pos.cards,
            max_nodes=self.max_nodes,
            max_seconds=seconds,
        )

    def solved_moves(self, game: CollapsiGame, deadline: float) -> list[str] | None:
        """The moves perfect play allows here, or ``None`` where the solvers do not apply
        or give up."""
        if "shifting" in game.variant:
            return None
        if "solo" in game.variant:
            try:
                now = cpu_now()
                line = solo.solve(game, now + (deadline - now) * PERFECT_SOLVER_SHARE)
            except solo.SoloBudgetExceeded:
                return None
            return line[:1] if line else None
        if game.num_players != 2:
            return None
        pos = game.to_position()
        try:
            if all(p >= 0 for p in pos.pawns):
                solver = self._solver(game, deadline)
                return [str(d) for d in analyse(pos, solver=solver).best_moves]
            return self._placement(game, pos, deadline)
        except SolverBudgetExceeded:
            return None

    def _placement(self, game: CollapsiGame, pos: Position, deadline: float) -> list[str] | None:
        """Player's Choice (ruling 6), two players: the best start cells by the solver."""
        solver = self._solver(game, deadline)
        seat = pos.to_move
        free = [int(c) for c in game.legal_cells()]

        def first_wins(red: int, blue: int) -> bool:
            if cpu_now() > deadline:
                raise SolverBudgetExceeded(0, 0.0)
            return solver.wins(pos.collapsed, red, blue)

        if seat == 1:
            red = pos.pawns[0]
            wins = [d for d in free if not first_wins(red, d)]
            return [str(c) for c in wins] or None
        # the first player: the starts that leave the fewest winning replies (none is best)
        replies = {c: sum(not first_wins(c, d) for d in free if d != c) for c in free}
        fewest = min(replies.values())
        return [str(c) for c in free if replies[c] == fewest]

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        g = _check(game)
        best = self.solved_moves(g, deadline)
        if best:
            self.last_source = "solver"
            return rng.choice(sorted(best, key=lambda m: int(m)))
        self.last_source = "search"
        move, _stats = mcts(CollapsiState(g), rng, self.iterations, deadline)
        return notation(move)  # type: ignore[arg-type]
