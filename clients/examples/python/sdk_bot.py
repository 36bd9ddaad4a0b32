"""A Python bot with the SDK: one method, the runner does the rest (README, "Write a bot").

    .venv/bin/python clients/examples/python/sdk_bot.py --url ws://127.0.0.1:8765 \
        --name mobility --quick-match collapsi

(the project's Python, where ``clients`` is installed: ``python3 dev.py serve`` made it)
"""

from clients.bot.sdk import Bot, run


class Mobility(Bot):
    """Leaves the next player as few moves as it can (any game, any variant)."""

    def choose(self, game):
        def replies(move):
            after = game.copy()
            after.play(move)
            return len(after.legal_moves())

        return min(game.legal_moves(), key=replies)


if __name__ == "__main__":
    raise SystemExit(run(Mobility()))
