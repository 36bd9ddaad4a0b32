"""The ``--moves`` argument of ``arena collapsi moves`` and ``solve``, parsed and replayed once.

Both commands must refuse the same move lists with the same one-line errors: an empty
item (``1,,9``) would otherwise silently solve a position other than the one meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clients.cli import CliError
from engine.base import EngineError

if TYPE_CHECKING:
    from engine.collapsi import CollapsiGame


def replay_moves(game: CollapsiGame, moves: str) -> None:
    """Play the comma-separated cells of ``moves`` on ``game``; ``CliError`` names the bad one."""
    played = [m.strip() for m in moves.split(",")] if moves.strip() else []
    for i, move in enumerate(played, 1):
        if not move:
            raise CliError(f"--moves: move {i} is empty; give cells separated by commas")
        if game.is_over():
            raise CliError(f"move {i} ({move}): the game is already over")
        try:
            game.play(move)
        except EngineError as exc:
            raise CliError(f"move {i} ({move}) is illegal: {exc}") from None
