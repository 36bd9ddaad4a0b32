"""AI players for every game of the arena, behind one interface.

``make_player(game_name, level, seed, budget_ms=None, iterations=None)``
returns a :class:`Player`; ``player.choose(game)`` returns a legal move in the
game's notation and leaves ``game`` unchanged. Levels, weakest first, are in
:data:`LEVELS`:

- Collapsi: ``random``, ``greedy`` (mobility: own moves minus the
  opponents'), ``mcts`` (UCT with random playouts, max-n for 3-4 players),
  ``perfect`` (the solver for two players, also choosing Player's Choice
  starts; the solo solver for puzzles; MCTS for 3-4 players, Shifting Board,
  and wherever a solver runs out of budget), ``strong`` (every board: one
  solver kept for the game, exact where it finishes within its budget, 5x5
  from the first move; Big Board with 3-4 players: fast max-n UCT whose
  playouts punish a stuck next seat; elsewhere alpha-beta on mobility (max-n
  for 3-4 players) with solved endgames; see :mod:`engine.ai.strong`).
- Collecto: ``random``, ``greedy`` (most points, then balls, now), ``search``
  (iterative-deepening alpha-beta on points so far), ``strong`` (the same
  search on expected points, with a bigger budget and no depth cap, so it
  plays the end exactly).

Players are deterministic given their seed and the position (see
:mod:`engine.ai.player`); ``strong`` given its seed and the game's moves so far
(it keeps its solver between moves). ``iterations`` is a deterministic budget (MCTS
playouts, alpha-beta positions); ``budget_ms`` a budget per move in CPU time
(:mod:`engine.clock`); with
both, whichever runs out first; with neither, a default iteration budget.
"""

from __future__ import annotations

from engine.ai.collapsi import GreedyPlayer as CollapsiGreedy
from engine.ai.collapsi import MctsPlayer, PerfectPlayer
from engine.ai.collecto import GreedyPlayer as CollectoGreedy
from engine.ai.collecto import SearchPlayer
from engine.ai.collecto import StrongPlayer as CollectoStrong
from engine.ai.player import Player, RandomPlayer
from engine.ai.strong import StrongPlayer
from engine.base import SetupError

_PLAYERS: dict[str, dict[str, type[Player]]] = {
    "collapsi": {
        "random": RandomPlayer,
        "greedy": CollapsiGreedy,
        "mcts": MctsPlayer,
        "perfect": PerfectPlayer,
        "strong": StrongPlayer,
    },
    "collecto": {
        "random": RandomPlayer,
        "greedy": CollectoGreedy,
        "search": SearchPlayer,
        "strong": CollectoStrong,
    },
}

#: level names per game, weakest first
LEVELS: dict[str, tuple[str, ...]] = {g: tuple(levels) for g, levels in _PLAYERS.items()}


def make_player(
    game_name: str,
    level: str,
    seed: int = 0,
    budget_ms: int | None = None,
    iterations: int | None = None,
) -> Player:
    """A player of ``level`` for ``game_name``; raises :class:`SetupError` for unknown names."""
    levels = _PLAYERS.get(game_name)
    if levels is None:
        raise SetupError(f"no AI players for game {game_name!r}; games: {', '.join(_PLAYERS)}")
    cls = levels.get(level)
    if cls is None:
        raise SetupError(
            f"unknown {game_name} level {level!r}; levels: {', '.join(LEVELS[game_name])}"
        )
    return cls(seed=seed, budget_ms=budget_ms, iterations=iterations)


__all__ = ["LEVELS", "Player", "RandomPlayer", "make_player"]
