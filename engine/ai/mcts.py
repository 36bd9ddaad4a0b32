"""Monte Carlo tree search (UCT) over any game that offers a :class:`SearchState`.

Max-n style, so it plays 2, 3 or 4 players (and the solo puzzle) alike: a
playout returns one reward per seat, every node keeps the summed reward of
the seat that moved into it, and at each node the seat to move picks the
child best for itself. With two players and 0/1 rewards this is plain UCT.

The tree is walked by applying moves to one mutable state and undoing them,
so no position is copied during the search.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Protocol

from engine.clock import cpu_now

#: exploration constant for rewards in [0, 1]
EXPLORATION = 1.0
#: iterations when neither an iteration nor a time budget is given
DEFAULT_ITERATIONS = 1000


class SearchState(Protocol):
    """What the search needs from a game: cheap moves, apply and undo."""

    def moves(self) -> Sequence[Hashable]:
        """Legal moves of the side to move, in a stable order; empty once the game is over."""
        ...

    def push(self, move: Hashable) -> None: ...

    def pop(self) -> None:
        """Undo the last :meth:`push`."""
        ...

    def mover(self) -> int:
        """Seat to move (only asked while the game is not over)."""
        ...

    def rewards(self) -> tuple[float, ...]:
        """One reward in [0, 1] per seat; only asked once the game is over."""
        ...


class _Node:
    __slots__ = ("children", "score", "untried", "visits", "who")

    def __init__(self, who: int, untried: list[Hashable]) -> None:
        self.who = who  # the seat that made the move leading here
        self.untried = untried
        self.children: dict[Hashable, _Node] = {}
        self.visits = 0
        self.score = 0.0  # summed reward of ``who``


def mcts(
    state: SearchState,
    rng: random.Random,
    iterations: int | None,
    deadline: float = math.inf,
    exploration: float = EXPLORATION,
) -> tuple[Hashable, dict[Hashable, tuple[int, float]]]:
    """Search from ``state`` (left as it was) and return the most visited move and
    per-move statistics ``{move: (visits, mean reward of the mover)}``.

    Stops after ``iterations`` playouts or at ``deadline`` (:func:`engine.clock.cpu_now`, CPU time),
    whichever comes first; at least one iteration is always run.
    """
    if iterations is None and deadline == math.inf:
        iterations = DEFAULT_ITERATIONS
    limit = iterations if iterations is not None else 1 << 62
    root_moves = list(state.moves())
    if not root_moves:
        raise ValueError("no legal move to search")
    root = _Node(-1, root_moves)
    done = 0
    clock = cpu_now
    while done < limit:
        if done and deadline != math.inf and clock() >= deadline:
            break
        node = root
        path = [root]
        depth = 0
        # selection
        while not node.untried and node.children:
            log_n = math.log(node.visits)
            best_move: Hashable = None
            best_val = -1.0
            for m, child in node.children.items():
                val = child.score / child.visits + exploration * math.sqrt(log_n / child.visits)
                if val > best_val:
                    best_val = val
                    best_move = m
            state.push(best_move)
            depth += 1
            node = node.children[best_move]
            path.append(node)
        # expansion
        if node.untried:
            i = rng.randrange(len(node.untried))
            move = node.untried[i]
            node.untried[i] = node.untried[-1]
            node.untried.pop()
            who = state.mover()
            state.push(move)
            depth += 1
            child = _Node(who, list(state.moves()))
            node.children[move] = child
            node = child
            path.append(node)
        # playout
        extra = 0
        moves = state.moves()
        while moves:
            state.push(moves[rng.randrange(len(moves))])
            extra += 1
            moves = state.moves()
        rewards = state.rewards()
        for _ in range(extra + depth):
            state.pop()
        # backpropagation
        for n in path:
            n.visits += 1
            if n.who >= 0:
                n.score += rewards[n.who]
        done += 1
    stats = {m: (c.visits, c.score / c.visits) for m, c in root.children.items()}
    if not stats:  # pragma: no cover - at least one iteration always expands the root
        return root_moves[0], {}
    choice = max(root.children, key=lambda m: (stats[m][0], stats[m][1]))
    return choice, stats
