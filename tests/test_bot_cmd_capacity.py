"""``arena bot`` at the server's limit of games at once (issue 16: many games in one
runner; the operator's ``--bot-max-games``).

A runner asked for more games at once (``--concurrency``) than the server lets a bot
play is refused ``too_many_rooms`` when it queues for one more: it says so once and
waits for one of its games to end, then queues again, and plays all its games.
"""

from __future__ import annotations

import shlex

import pytest

from tests.engine_examples import bad
from tests.test_bot_cmd import PY_ENGINE, all_complete, arena_bot, bots

SAID = "games at once is the server's limit here"


@pytest.mark.timeout(120)
async def test_a_runner_over_the_servers_cap_waits_for_a_game_to_end(arena):
    await arena.start(bot_max_games=2)
    # one side answers 0.15 s after each go: games last long enough to reach the cap
    common = ["--quick-match", "collapsi", "--games", "5", "--concurrency", "4"]
    async with bots(
        arena_bot(arena.url, "paused", "--engine", shlex.join(bad("pause")), *common),
        arena_bot(arena.url, "quick", "--engine", PY_ENGINE, *common),
    ) as both:
        await all_complete(both, 5)
    for bot in both:
        capped = [ln for ln in bot.lines if SAID in ln]
        assert len(capped) == 1, bot.lines  # said once, not a refusal every poll
        assert "2 games at once" in capped[0]
        assert not [ln for ln in bot.lines if "the server refused" in ln], bot.lines
