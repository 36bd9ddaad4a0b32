"""The strong Collapsi player: the solver where it can finish, playouts with 3-4 players,
alpha-beta with an evaluation elsewhere, on every board (issue 20).

- Two players on fixed cards (not Shifting Board), both pawns placed: one
  :class:`~engine.collapsi.solver.Solver` is kept for the game (its tables
  carry over from move to move) and asked who wins, within a budget of new
  positions and a share of the CPU-time budget. Solved: a winning move if
  there is one (exact play; on 5x5 from the first move). Unsolved or lost:
  the search below, whose leaves with few face-up cards are solved exactly
  by the same solver (solver-backed endgames).
- 3-4 players on fixed cards (Big Board): max-n UCT on a bare bitmask state
  with playouts that punish a next seat left without a move
  (:mod:`engine.ai.multi`); ``iterations`` counts its playouts. A share
  depends only on who is stuck first (ruling 3), which playouts estimate
  directly: this beat max-n search on a mobility evaluation, which was only
  even with MCTS(300) (bench/README.md, "Every board").
- Everything else (Shifting Board, Player's Choice starts, 6x6 openings, the
  ``elimination`` house rule): an iterative-deepening search on an
  evaluation of mobility (a player's legal destinations minus the
  opponents' mean) and, at the end, the finishing order of ruling 3:
  alpha-beta with two players, max-n with 3-4 (each player takes the move
  best for itself).
- Solo puzzles: the solo solver (as the ``perfect`` level).

``iterations`` caps the search positions (or playouts) per move and the solver has a fixed
position budget per move, so a game is reproducible move for move under an
iteration budget; ``budget_ms`` is CPU time (:mod:`engine.clock`). Unlike the
other levels this player keeps its solver between moves of one game, so the
answer in a position can depend on the positions it was asked about before
(the move is then exact either way, or found with more knowledge).
"""

from __future__ import annotations

import math
import random

from engine.ai import multi
from engine.ai.collapsi import PerfectPlayer, _check, notation, rewards
from engine.ai.player import Player
from engine.base import Game
from engine.clock import cpu_now
from engine.collapsi.game import OUT, UNPLACED, CollapsiGame
from engine.collapsi.solver import Solver, SolverBudgetExceeded

#: search positions per move without an iteration or time budget
DEFAULT_NODES = 20_000
#: playouts per move with 3-4 players without an iteration or time budget
DEFAULT_PLAYOUTS = 5_000
#: new solver positions per move (deterministic; about 1-3 s of CPU time)
SOLVER_NODES = 2_500_000
#: the root is handed to the solver when this few cards are face up (5x5 from the start)
SOLVE_CELLS = 25
#: search leaves with this few cards face up are solved exactly
ENDGAME_CELLS = 14
#: share of a time budget the root solve may spend
SOLVER_SHARE = 0.5
#: positions the kept solver may hold before it starts again (memory)
SOLVER_MAX_STORED = 6_000_000
WIN = 10_000.0
#: deepest iteration of the search
MAX_DEPTH = 12


class _Abort(Exception):
    """The search ran out of budget inside an iteration."""


class StrongPlayer(Player):
    """See the module docstring."""

    level = "strong"

    def __init__(
        self,
        seed: int = 0,
        budget_ms: int | None = None,
        iterations: int | None = None,
        solver_nodes: int = SOLVER_NODES,
    ) -> None:
        super().__init__(seed, budget_ms, iterations)
        self.solver_nodes = solver_nodes
        self._solver: Solver | None = None
        self._solver_key: tuple = ()
        #: how the last move was chosen: "solver", "mcts", "search" or "solo" (tests, logs)
        self.last_source = ""
        #: depth of the last completed search iteration
        self.last_depth = 0

    # -- the solver, kept for the game ----------------------------------------------
    def solver_for(self, game: CollapsiGame) -> Solver:
        pos = game.to_position()
        key = (pos.rules, pos.width, pos.height, pos.cards)
        s = self._solver
        if s is None or key != self._solver_key or len(s.wtt) + len(s.ltt) > SOLVER_MAX_STORED:
            s = Solver(pos.rules, pos.width, pos.height, pos.cards)
            self._solver, self._solver_key = s, key
        return s

    def _solvable(self, game: CollapsiGame) -> bool:
        return (
            game.num_players == 2
            and "shifting" not in game.variant
            and min(game.to_position().pawns) >= 0
        )

    def _solve_root(self, game: CollapsiGame, deadline: float) -> list[int] | None:
        """Winning destinations, ``[]`` if the position is lost, ``None`` if unsolved."""
        pos = game.to_position()
        if pos.cells - pos.collapsed.bit_count() > SOLVE_CELLS:
            return None
        s = self.solver_for(game)
        s.max_nodes = len(s.wtt) + len(s.ltt) + self.solver_nodes
        s.max_seconds = None
        if deadline != math.inf:
            s.max_seconds = max(0.0, (deadline - cpu_now()) * SOLVER_SHARE)
        me, opp = pos.pawns[pos.to_move], pos.pawns[1 - pos.to_move]
        nc = pos.collapsed | (1 << me)
        try:
            if not s.wins(pos.collapsed, me, opp):
                return []
            shift = s._shift
            legal = game.legal_cells()
            won = [d for d in legal if s.wtt.get(nc << 2 * shift | opp << shift | d) is False]
            for d in legal if not won else ():
                if not s._win(nc, opp, d):
                    won.append(d)
                    break
            return won
        except SolverBudgetExceeded:
            return None

    # -- choosing ----------------------------------------------------------------------
    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        g = _check(game)
        if "solo" in g.variant:
            self.last_source = "solo"
            best = PerfectPlayer(self.seed).solved_moves(g, deadline)
            if best:
                return rng.choice(sorted(best, key=int))
        elif self._solvable(g):
            won = self._solve_root(g, deadline)
            if won:
                self.last_source = "solver"
                return str(rng.choice(sorted(won)))
        elif multi.applies(g):
            self.last_source = "mcts"
            playouts = self.iterations
            if playouts is None:
                playouts = DEFAULT_PLAYOUTS if deadline == math.inf else 1 << 62
            move, _stats = multi.search(g, rng, playouts, deadline)
            return str(move)
        self.last_source = "search"
        return notation(self._search(g, rng, deadline))

    # -- the search ----------------------------------------------------------------------
    def _search(self, game: CollapsiGame, rng: random.Random, deadline: float) -> tuple:
        g = game.copy()
        self._root_seat = g.to_move()
        self._shifting = "shifting" in g.variant
        self._exact = self._solvable(g) and not self._shifting
        self._endgame_solver = self.solver_for(g) if self._exact else None
        if self._endgame_solver is not None:  # leaf solves are small: no budget of their own
            self._endgame_solver.max_nodes = 1 << 62
            self._endgame_solver.max_seconds = None
        limit = self.iterations
        if limit is None and deadline == math.inf:
            limit = DEFAULT_NODES
        self._limit = limit if limit is not None else 1 << 62
        self._deadline = deadline
        self._nodes = 0
        root = self._moves(g)
        rng.shuffle(root)
        best = root[0]
        self.last_depth = 0
        for depth in range(1, MAX_DEPTH + 1):
            try:
                value, move, scores = self._root(g, root, depth)
            except _Abort:
                break
            best = move
            self.last_depth = depth
            root.sort(key=lambda m: -scores[m])  # stable: ties keep the seeded order
            if abs(value) >= WIN / 2:  # the end is in sight either way
                break
        return best

    def _moves(self, g: CollapsiGame) -> list[tuple[int, int]]:
        cells = g.legal_cells()
        if self._shifting and g.steps() != "place":
            return [(d, s) for d in cells for s in range(4)]
        return [(d, -1) for d in cells]

    def _root(self, g: CollapsiGame, moves: list, depth: int) -> tuple[float, tuple, dict]:
        alpha = -math.inf
        best = moves[0]
        scores = {}
        maxn = g.num_players > 2
        for move in moves:
            g.play_cell(*move)
            try:
                if maxn:
                    v = self._vector(g, depth - 1, depth > 1)[self._root_seat]
                else:
                    v = self._value(g, depth - 1, alpha, math.inf, depth > 1)
            finally:
                g.undo()
            scores[move] = v
            if v > alpha:
                alpha, best = v, move
        return alpha, best, scores

    def _tick(self, abortable: bool) -> None:
        self._nodes += 1
        if abortable and (
            self._nodes > self._limit
            # the CPU clock is a system call: read it every 64 positions
            or (not self._nodes & 63 and self._deadline != math.inf and cpu_now() > self._deadline)
        ):
            raise _Abort

    def _vector(self, g: CollapsiGame, depth: int, abortable: bool) -> list[float]:
        """Max-n for 3-4 players: a value per seat, each mover takes the child best for
        itself (assuming every opponent plays against us misjudges a game in which the
        player before the stuck one wins, ruling 3)."""
        self._tick(abortable)
        result = g.result()
        if result is not None:
            return [(r - 0.5) * 2 * (WIN + depth) for r in rewards(result, g.num_players)]
        if depth <= 0:
            mob = self._mobility(g)
            total = sum(mob)
            k = len(mob) - 1
            return [m - (total - m) / k for m in mob]
        mover = g.to_move()
        best: list[float] | None = None
        for move in self._moves(g):
            g.play_cell(*move)
            try:
                v = self._vector(g, depth - 1, abortable)
            finally:
                g.undo()
            if best is None or v[mover] > best[mover]:
                best = v
        assert best is not None  # the game is not over: the mover has a move
        return best

    def _value(self, g: CollapsiGame, depth: int, alpha: float, beta: float, abortable: bool):
        """Paranoid alpha-beta (two players: plain alpha-beta): the root player maximises,
        everyone else minimises."""
        self._tick(abortable)
        result = g.result()
        if result is not None:
            r = rewards(result, g.num_players)[self._root_seat]
            return (r - 0.5) * 2 * (WIN + depth)  # sooner wins, later losses score higher
        if self._exact:
            pos = g.to_position()
            faces = pos.cells - pos.collapsed.bit_count()
            if faces <= ENDGAME_CELLS:
                s = self._endgame_solver
                me, opp = pos.pawns[pos.to_move], pos.pawns[1 - pos.to_move]
                s._begin()
                mover_wins = s._win(pos.collapsed, me, opp)
                mine = mover_wins == (pos.to_move == self._root_seat)
                return (1 if mine else -1) * (WIN / 2 + faces)
        if depth <= 0:
            return self._evaluate(g)
        maximise = g.to_move() == self._root_seat
        best = -math.inf if maximise else math.inf
        for move in self._moves(g):
            g.play_cell(*move)
            try:
                v = self._value(g, depth - 1, alpha, beta, abortable)
            finally:
                g.undo()
            if maximise:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    def _evaluate(self, g: CollapsiGame) -> float:
        """Mobility: the root player's destinations minus the opponents' mean."""
        mob = self._mobility(g)
        me = mob[self._root_seat]
        others = [m for s, m in enumerate(mob) if s != self._root_seat]
        return me - sum(others) / len(others) if others else float(me)

    def _mobility(self, g: CollapsiGame) -> list[int]:
        """Legal destinations per seat (a pawn not placed yet counts 4, a seat out 0)."""
        mob = []
        for seat, cell in enumerate(g._pawns):
            if cell == UNPLACED:
                mob.append(4)
            elif cell == OUT:
                mob.append(0)
            elif seat == g._turn:
                mob.append(len(g._legal))
            else:
                mob.append(len(g._gen(seat)))
        return mob


__all__ = ["StrongPlayer"]
