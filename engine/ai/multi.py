"""Fast UCT for Collapsi with 3-4 players on fixed cards (Big Board; issue 20).

With 3-4 players the game ends at the first stuck player and everyone else
ranks by how recently they moved (ruling 3), so a player's share depends only
on *who* gets stuck first. Random playouts estimate exactly that, and max-n
UCT (each seat maximises its own reward) turns the estimates into moves. This
module runs the same search as :mod:`engine.ai.mcts` on a bare bitmask state
(collapsed cards, occupied cards, pawn cells, seat to move): a playout copies
four ints and walks the move tables with no undo records, several times the
playouts per second of the game object, so a budget of playouts buys more.

Two things differ from plain UCT:

- the tree keeps the immediate outcome: a move that leaves the next seat
  stuck ends the game there, and is found on expansion like any other child;
- playouts are *sticky* for the mover's next seat: at each playout step the
  mover takes, with probability ``KILL_RATE``, a move after which the next
  seat has no move, if there is one (a cheap check that
  makes the simulated opponents punish obvious blunders, as the real ones do).

Only used where it applies (:func:`applies`): 3-4 players, every pawn placed,
no Shifting Board, no solo exit, no ``elimination`` house rule; the strong
player falls back to its other searches elsewhere.
"""

from __future__ import annotations

import math
import random

from engine.clock import cpu_now
from engine.collapsi.game import OUT, CollapsiGame, open_destinations

#: exploration constant for rewards in [0, 1]
EXPLORATION = 0.7
#: chance that a playout step looks for a move that leaves the next seat stuck
KILL_RATE = 0.5


def applies(game: CollapsiGame) -> bool:
    """Whether the fast search can play ``game``'s position (see the module docstring)."""
    return (
        game.num_players > 2
        and not game._shifting
        and not game._solo
        and not game._elimination
        and min(game._pawns) != -2  # UNPLACED: Player's Choice starts
        and game.result() is None
    )


class _Node:
    __slots__ = ("children", "score", "untried", "visits", "who")

    def __init__(self, who: int, untried: list[int]) -> None:
        self.who = who
        self.untried = untried
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.score = 0.0


class _Search:
    """One move's search: the game's tables and cards, and the state helpers."""

    def __init__(self, game: CollapsiGame, rng: random.Random) -> None:
        self.tables = game._tables
        self.cards = game._cards
        self.n = game.num_players
        self.rng = rng
        self.root = (game._collapsed, game._occupied, tuple(game._pawns), game._turn)
        alive = [s for s in range(self.n) if game._pawns[s] != OUT]
        self.alive = alive
        #: the seat that moves after each live seat
        self.after = {s: alive[(i + 1) % len(alive)] for i, s in enumerate(alive)}
        self.rewards = {k: self._rewards(k) for k in alive}

    def _rewards(self, stuck: int) -> tuple[float, ...]:
        """Reward per seat when ``stuck`` cannot move (ruling 3): the live seats by how
        recently they moved, the stuck one last of them; seats out below (score 0)."""
        alive, n = self.alive, self.n
        i = alive.index(stuck)
        out = [0.0] * n
        for rank in range(len(alive)):
            seat = alive[(i - 1 - rank) % len(alive)]
            out[seat] = (n - 1 - rank) / (n - 1)
        return tuple(out)

    def moves(self, collapsed: int, occupied: int, cell: int) -> list[int]:
        others = occupied ^ (1 << cell)
        return open_destinations(self.tables[self.cards[cell]][cell], collapsed, others)

    def can_move(self, collapsed: int, occupied: int, cell: int) -> bool:
        others = occupied ^ (1 << cell)
        for _d, dbit, masks in self.tables[self.cards[cell]][cell]:
            if dbit & others:
                continue
            for m in masks:
                if not m & collapsed:
                    return True
        return False

    def playout(self, collapsed: int, occupied: int, pawns: list[int], turn: int) -> int:
        """Play on at random from a position whose mover has a move; return the stuck seat."""
        rng = self.rng
        after = self.after
        moves = self.moves
        can_move = self.can_move
        while True:
            cell = pawns[turn]
            legal = moves(collapsed, occupied, cell)
            if not legal:
                return turn
            nxt = after[turn]
            c2 = collapsed | (1 << cell)
            if len(legal) > 1 and rng.random() < KILL_RATE:
                ncell = pawns[nxt]
                for d in legal:
                    o2 = occupied ^ ((1 << cell) | (1 << d))
                    if not can_move(c2, o2, ncell):
                        return nxt  # the mover leaves the next seat stuck
            d = legal[rng.randrange(len(legal))]
            collapsed = c2
            occupied ^= (1 << cell) | (1 << d)
            pawns[turn] = d
            turn = nxt

    def run(self, iterations: int, deadline: float, exploration: float) -> dict[int, _Node]:
        collapsed0, occupied0, pawns0, turn0 = self.root
        root = _Node(-1, self.moves(collapsed0, occupied0, pawns0[turn0]))
        rng = self.rng
        after = self.after
        log = math.log
        sqrt = math.sqrt
        done = 0
        while done < iterations:
            if done and deadline != math.inf and not done & 15 and cpu_now() >= deadline:
                break
            collapsed, occupied, turn = collapsed0, occupied0, turn0
            pawns = list(pawns0)
            node = root
            path = [root]
            stuck = -1
            # selection: descend while the node is fully expanded
            while not node.untried and node.children:
                log_n = log(node.visits)
                best_val = -1.0
                best_move = -1
                for m, child in node.children.items():
                    val = child.score / child.visits + exploration * sqrt(log_n / child.visits)
                    if val > best_val:
                        best_val, best_move = val, m
                cell = pawns[turn]
                collapsed |= 1 << cell
                occupied ^= (1 << cell) | (1 << best_move)
                pawns[turn] = best_move
                turn = after[turn]
                node = node.children[best_move]
                path.append(node)
            if not node.untried and not node.children:
                stuck = turn  # a terminal node: its mover is stuck
            else:
                # expansion
                i = rng.randrange(len(node.untried))
                move = node.untried[i]
                node.untried[i] = node.untried[-1]
                node.untried.pop()
                cell = pawns[turn]
                collapsed |= 1 << cell
                occupied ^= (1 << cell) | (1 << move)
                pawns[turn] = move
                who = turn
                turn = after[turn]
                child = _Node(who, self.moves(collapsed, occupied, pawns[turn]))
                node.children[move] = child
                path.append(child)
                stuck = (
                    turn if not child.untried else self.playout(collapsed, occupied, pawns, turn)
                )
            rewards = self.rewards[stuck]
            for n in path:
                n.visits += 1
                if n.who >= 0:
                    n.score += rewards[n.who]
            done += 1
        return root.children


def search(
    game: CollapsiGame,
    rng: random.Random,
    iterations: int,
    deadline: float = math.inf,
    exploration: float = EXPLORATION,
) -> tuple[int, dict[int, tuple[int, float]]]:
    """The most visited destination after ``iterations`` playouts (or at ``deadline``,
    CPU time), and per-move ``{destination: (visits, mean reward of the mover)}``."""
    children = _Search(game, rng).run(iterations, deadline, exploration)
    stats = {m: (c.visits, c.score / c.visits) for m, c in children.items()}
    move = max(children, key=lambda m: stats[m])
    return move, stats


__all__ = ["applies", "search"]
