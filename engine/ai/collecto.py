"""Collecto players: greedy (most points, then balls, now) and alpha-beta searches
(``search`` on points so far, ``strong`` on expected points).

Both work on a private copy of the board through :mod:`engine.collecto.board`
(the same push, pair and collect functions the game uses), so the moves they
consider are exactly the game's legal moves (rulings 11-13).
"""

from __future__ import annotations

import math
import random
from math import comb

from engine.ai.player import Player
from engine.base import Game, SetupError
from engine.clock import cpu_now
from engine.collecto import board as B
from engine.collecto.game import CollectoGame

Move = tuple[int, ...]

#: positions the search may visit per move when it has no budget at all
DEFAULT_NODES = 3000
#: evaluation: a point is worth this many balls (points decide, balls break ties: ruling 14)
POINT_WEIGHT = 10
WIN = 1_000_000


class _Abort(Exception):
    """The search ran out of budget in the middle of a depth."""


def _check(game: Game) -> CollectoGame:
    if not isinstance(game, CollectoGame):
        raise SetupError(f"a Collecto player cannot play {game.name}")
    return game


class CollectoState:
    """Board, both collections and the side to move, with undo."""

    def __init__(self, game: CollectoGame) -> None:
        self.board: list[int] = [*game.board(), 0]  # cell 49: the always-empty sentinel
        self.collected = [[0] + [game.collected(s)[str(c)] for c in range(1, 7)] for s in (0, 1)]
        self.to_move = game.to_move() or 0
        self._undo: list[tuple[list[int], int, list[int]]] = []

    def moves(self) -> list[Move]:
        singles, doubles = B.legal_moves(self.board)
        return [(m,) for m in singles] if singles else list(doubles)

    def push(self, move: Move) -> list[int]:
        """Play ``move``; return the balls taken per colour."""
        before = self.board
        board = before.copy()
        for m in move:
            B.push(board, m)
        taken = B.collect(board)
        mine = self.collected[self.to_move]
        self._undo.append((before, self.to_move, list(mine)))
        for c in range(1, B.COLOURS + 1):
            mine[c] += taken[c]
        self.board = board
        self.to_move = 1 - self.to_move
        return taken

    def pop(self) -> None:
        self.board, seat, mine = self._undo.pop()
        self.collected[seat] = mine
        self.to_move = seat

    def key(self, seat: int) -> tuple[int, int]:
        """(points, balls) of ``seat``: the final order of ruling 14."""
        mine = self.collected[seat]
        return B.points(mine), sum(mine[1:])

    def margin(self) -> int:
        """Points, then balls, both as differences, for the side to move."""
        (p0, b0), (p1, b1) = self.key(self.to_move), self.key(1 - self.to_move)
        return POINT_WEIGHT * (p0 - p1) + (b0 - b1)

    def evaluate(self) -> float:
        """Heuristic value for the side to move: the margin so far."""
        return self.margin()

    def final(self) -> int:
        """Exact value for the side to move once nobody can move."""
        v = self.margin()
        return (WIN + v) if v > 0 else (-WIN + v) if v < 0 else 0


def _expected_points() -> dict[tuple[int, int], float]:
    """Per colour, keyed by (my balls, their balls): the expected point difference if the
    balls still on the board went to either player with even odds (ruling 14: a point per
    full three of a colour). So two balls of a colour count for more while a third is still
    on the board than once none is left."""
    out = {}
    n = B.BALLS_PER_COLOUR
    for m in range(n + 1):
        for t in range(n + 1 - m):
            r = n - m - t
            out[m, t] = sum(comb(r, x) * ((m + x) // 3 - (t + r - x) // 3) for x in range(r + 1))
            out[m, t] /= 2**r
    return out


EXPECTED_POINTS = _expected_points()


class ExpectingState(CollectoState):
    """The strong level's evaluation: expected points (see :func:`_expected_points`) rather
    than points so far, then balls; the end of the game is still scored exactly."""

    def evaluate(self) -> float:
        mine, theirs = self.collected[self.to_move], self.collected[1 - self.to_move]
        table = EXPECTED_POINTS
        e = sum(table[mine[c], theirs[c]] for c in range(1, B.COLOURS + 1))
        return POINT_WEIGHT * e + (sum(mine) - sum(theirs))


def _gain(state: CollectoState, move: Move) -> tuple[int, int]:
    before = state.key(state.to_move)
    state.push(move)
    after = state.key(1 - state.to_move)
    state.pop()
    return after[0] - before[0], after[1] - before[1]


class GreedyPlayer(Player):
    """The move that gains the most points now, then the most balls; ties at random."""

    level = "greedy"

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        state = CollectoState(_check(game))
        best: list[Move] = []
        best_gain = (-1, -1)
        for move in state.moves():
            gain = _gain(state, move)
            if gain > best_gain:
                best_gain, best = gain, [move]
            elif gain == best_gain:
                best.append(move)
        return B.format_move(rng.choice(best))


class SearchPlayer(Player):
    """Iterative-deepening alpha-beta (negamax) on points and balls.

    ``iterations`` caps the positions visited per move (deterministic);
    ``budget_ms`` caps the time. The answer comes from the deepest search that
    finished; depth 1 always finishes. Moves are ordered by immediate gain
    (ties shuffled by the seed), then the previous depth's best move first.
    """

    level = "search"
    #: the state and evaluation searched
    state_class: type[CollectoState] = CollectoState
    #: positions per move without an iteration or time budget
    default_nodes = DEFAULT_NODES
    #: the deepest iteration
    default_depth = 6

    def __init__(
        self,
        seed: int = 0,
        budget_ms: int | None = None,
        iterations: int | None = None,
        max_depth: int | None = None,
    ) -> None:
        super().__init__(seed, budget_ms, iterations)
        self.max_depth = self.default_depth if max_depth is None else max_depth
        #: depth of the last completed search (for tests and logs)
        self.last_depth = 0

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        state = self.state_class(_check(game))
        limit = self.iterations
        if limit is None and deadline == math.inf:
            limit = self.default_nodes
        self._limit = limit if limit is not None else 1 << 62
        self._deadline = deadline
        self._nodes = 0
        self._rng = rng
        self._order: dict[tuple[int, ...], list[Move]] = {}
        root = self._ordered(state)
        best = root[0]
        self.last_depth = 0
        for depth in range(1, self.max_depth + 1):
            try:
                value, move = self._root(state, root, depth)
            except _Abort:
                break
            best = move
            self.last_depth = depth
            root.remove(move)
            root.insert(0, move)
            if abs(value) >= WIN:  # the result is known; deeper search changes nothing
                break
        return B.format_move(best)

    def _ordered(self, state: CollectoState) -> list[Move]:
        moves = state.moves()
        self._rng.shuffle(moves)
        gains = {m: _gain(state, m) for m in moves}
        moves.sort(key=lambda m: gains[m], reverse=True)
        return moves

    def _root(self, state: CollectoState, moves: list[Move], depth: int) -> tuple[float, Move]:
        alpha = -math.inf
        best = moves[0]
        for move in moves:
            state.push(move)
            try:
                v = -self._negamax(state, depth - 1, -math.inf, -alpha, depth > 1)
            finally:
                state.pop()
            if v > alpha:
                alpha, best = v, move
        return alpha, best

    def _negamax(
        self, state: CollectoState, depth: int, alpha: float, beta: float, abortable: bool
    ) -> float:
        self._nodes += 1
        if abortable and (
            self._nodes > self._limit or (self._deadline != math.inf and cpu_now() > self._deadline)
        ):
            raise _Abort
        if depth == 0:
            return state.evaluate()
        key = (*state.board[: B.CELLS], state.to_move)
        moves = self._order.get(key)
        if moves is None:
            moves = self._ordered(state) if depth > 1 else state.moves()
            if depth > 1:
                self._order[key] = moves
        if not moves:
            return state.final()
        best = -math.inf
        for move in moves:
            state.push(move)
            try:
                v = -self._negamax(state, depth - 1, -beta, -alpha, abortable)
            finally:
                state.pop()
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best


class StrongPlayer(SearchPlayer):
    """The same alpha-beta on expected points (:class:`ExpectingState`), allowed to search
    to the end of the game: no depth cap short of the longest game, and a default budget
    ten times ``search``'s. Near the end, when few pushes are left, its iterations reach
    the final count (ruling 14) and its play is exact; before that it stops at its budget
    like ``search``. Searching deeper on ``search``'s evaluation (points so far) was not
    measurably stronger; the expected-points evaluation is (bench/README.md, "Every
    board")."""

    level = "strong"
    state_class = ExpectingState
    default_nodes = 10 * DEFAULT_NODES
    default_depth = 40
