"""The primitive form of a Collapsi position, shared by the engine, the solver and the AI.

It is deliberately plain (ints and tuples, bit masks over row-major cells) so
that the solver and the bots can build their own fast tables from it without
depending on how the game object keeps its history.
"""

from __future__ import annotations

from dataclasses import dataclass

JACK = 0
"""Card value of a jack (standard rules) or joker (classic rules)."""


@dataclass(frozen=True, slots=True)
class Position:
    """A Collapsi position, independent of how it was reached.

    ``cards[i]`` is the value of the card at cell ``i`` (cell = row * width + column):
    :data:`JACK` or 1 to 4, the number of steps a pawn standing there must move.
    A pawn on a jack moves 1 step under the standard rules (v1.3.1) and 1, 2, 3
    or 4 steps under the classic rules (v1.1.0) (ruling 1).
    ``collapsed`` has bit ``i`` set when cell ``i`` is face down.
    ``pawns[s]`` is seat ``s``'s cell, or -1 once that seat is out of the game.
    ``to_move`` is the seat whose turn it is.
    """

    rules: str
    width: int
    height: int
    cards: tuple[int, ...]
    collapsed: int
    pawns: tuple[int, ...]
    to_move: int

    @property
    def cells(self) -> int:
        return self.width * self.height
