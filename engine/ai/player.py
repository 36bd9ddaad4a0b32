"""The one interface every AI player implements, for every game.

A :class:`Player` is asked :meth:`Player.choose` with a :class:`~engine.base.Game`
and answers a legal move in the game's own notation. Players keep no state
between calls that could change an answer: the random generator of each call
is seeded from (player seed, deal, moves so far), so the same player asked
about the same position answers the same move, whatever it was asked before
(a bot that reconnects, a game replayed for review, a test). Search players
stop at an iteration budget (deterministic; what tests and the ladder use)
and/or a time budget in milliseconds of CPU time of the searching thread
(:mod:`engine.clock`; what rooms use); whichever comes first.

Pure Python: no I/O, no third-party imports.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import ClassVar

from engine.base import Game, GameOver, IllegalMove
from engine.clock import cpu_now

#: fraction of a time budget a search may spend; the rest covers the answer's way back
TIME_SAFETY = 0.8


class Player(ABC):
    """An AI player; see the module docstring.

    ``seed`` makes answers reproducible, ``budget_ms`` caps the thinking time
    per move, ``iterations`` caps the work per move in a deterministic unit
    (playouts for MCTS, positions for alpha-beta). Players that do not search
    ignore both.
    """

    #: the level name in the registry (``"random"``, ``"greedy"``, ...)
    level: ClassVar[str]

    def __init__(
        self, seed: int = 0, budget_ms: int | None = None, iterations: int | None = None
    ) -> None:
        if budget_ms is not None and budget_ms <= 0:
            raise ValueError("budget_ms must be positive")
        if iterations is not None and iterations <= 0:
            raise ValueError("iterations must be positive")
        self.seed = seed
        self.budget_ms = budget_ms
        self.iterations = iterations

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(seed={self.seed}, budget_ms={self.budget_ms}, "
            f"iterations={self.iterations})"
        )

    def choose(self, game: Game) -> str:
        """A legal move for the side to move of ``game`` (which is not changed).

        Raises :class:`GameOver` if the game has ended. A single legal move is
        answered at once without thinking.
        """
        if game.is_over():
            raise GameOver("the game is over: there is no move to choose")
        moves = game.legal_moves()
        if len(moves) == 1:
            return moves[0]
        started = cpu_now()
        move = self._choose(game, self.rng_for(game), self.deadline(started))
        if move not in moves:  # a bug in a player must never reach a room
            raise IllegalMove(f"{self!r} chose {move!r}, not a legal move")  # pragma: no cover
        return move

    @abstractmethod
    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        """The move; ``deadline`` is an :func:`engine.clock.cpu_now` value (CPU seconds of
        this thread; ``inf`` without budget)."""

    # -- helpers ------------------------------------------------------------------
    def rng_for(self, game: Game) -> random.Random:
        """A generator seeded from the player's seed and the game so far (string seeds
        are hashed with SHA-512 by :mod:`random`, so this is stable across processes)."""
        return random.Random(
            f"{self.level}/{self.seed}/{game.name}/{game.variant}/{game.setup()}/"
            + ",".join(game.history)
        )

    def deadline(self, started: float) -> float:
        if self.budget_ms is None:
            return float("inf")
        return started + self.budget_ms * TIME_SAFETY / 1000


class RandomPlayer(Player):
    """Uniformly random legal moves: the bottom of every ladder."""

    level = "random"

    def _choose(self, game: Game, rng: random.Random, deadline: float) -> str:
        return rng.choice(game.legal_moves())
