"""The Python bot SDK: a bot is a class with one method; ``arena bot`` does the rest.

    from clients.bot.sdk import Bot, run

    class Mobility(Bot):
        def choose(self, game):
            def replies(move):
                after = game.copy()
                after.play(move)
                return len(after.legal_moves())
            return min(game.legal_moves(), key=replies)

    if __name__ == "__main__":
        run(Mobility())   # takes arena bot's flags: --url --name --quick-match ...

``choose`` gets the engine's own :class:`engine.Game` (a copy, kept up to date from
the server's events: the deal, every move, every forfeit) and returns one of
``game.legal_moves()`` (or ``"resign"``). It runs in a worker thread, so it may
think; the runner keeps the clocks, reconnects, and plays several games at once.
"""

from __future__ import annotations

from engine.base import Game


class Bot:
    """Subclass and implement :meth:`choose`. The other methods are optional hooks."""

    def choose(self, game: Game) -> str:
        """The move to play in ``game`` (the side to move is you)."""
        raise NotImplementedError("a Bot subclass implements choose(game)")

    def new_game(self, game: Game, seat: int) -> None:
        """A game starts and you play ``seat``."""

    def game_over(self, winner: int | None, reason: str) -> None:
        """The game ended: ``winner`` is a seat (``None``: a draw)."""


def run(bot: Bot, argv: list[str] | None = None) -> int:
    """Run ``bot`` as ``arena bot`` would, with the command line's flags (``argv``);
    returns the exit status."""
    import sys

    from clients.cli import bot_cmd

    return bot_cmd.main(sys.argv[1:] if argv is None else argv, bot=bot)
