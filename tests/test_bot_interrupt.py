"""A game that ends while ``arena bot`` waits for its engine's move stops the asking:
an engine that crashed is started again (the policy), but asked nothing more for a
game that is over."""

from __future__ import annotations

import asyncio

import pytest

from clients.bot.brains import EngineBrain
from clients.bot.timing import MoveTime
from clients.engines import protocol as p
from engine.base import new_game
from tests.engine_examples import bad


@pytest.mark.timeout(60)
async def test_an_interrupted_choice_asks_no_more_after_a_crash() -> None:
    strikes: list[str] = []
    struck = asyncio.Event()

    def strike(reason: str) -> None:
        strikes.append(reason)
        struck.set()

    brain = EngineBrain(" ".join(bad("crash")), {}, strike, lambda text: None, 20.0)
    await brain.start()
    game = new_game("collapsi", seed=1)
    await brain.new_game(game, game.to_move())
    try:
        choosing = asyncio.create_task(
            brain.choose(game, game.legal_moves(), MoveTime(None, None, p.Go()))
        )
        await asyncio.wait_for(struck.wait(), 30)  # it crashed; choose() starts it again
        await brain.interrupt()  # the game ended meanwhile
        assert await asyncio.wait_for(choosing, 30) is None
        assert len(strikes) == 1, strikes  # (before: asked again, a crash each, 20 s)
    finally:
        await brain.close()
