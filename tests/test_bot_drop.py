"""``arena bot``'s connection lost while a request is in flight (a server stopping as
the bot queues for its next game): the bot resumes and queues again. Before, the failed
request sent the next at once on the closed socket, which failed at once, and so on
without a turn of the loop: the bot spun at full CPU, kept every failed request, and
ignored SIGTERM (seen after a server's SIGTERM: 10 GB in 40 minutes)."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from clients.bot.brains import LevelBrain
from clients.bot.config import BotConfig
from clients.bot.runner import BotRunner
from clients.client import Client


@pytest.mark.timeout(60)
async def test_a_drop_with_a_request_in_flight_is_resumed_not_spun_on(arena):
    await arena.start()
    queued = 0
    again = asyncio.Event()  # queued again (once resumed)

    class DropsOnce(Client):
        """Its first quick_match is sent, then the connection dropped under it."""

        async def quick_match(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal queued
            queued += 1
            if queued > 1:
                again.set()
                return await super().quick_match(*args, **kwargs)
            # (dropped once the request is written and its reply awaited)
            asyncio.get_running_loop().call_soon(self.ws.transport.abort)
            return await super().quick_match(*args, **kwargs)

    cfg = BotConfig(url=arena.url, name="dropper", level="random", quick_match=["collapsi"])
    out = io.StringIO()
    runner = BotRunner(cfg.check(), lambda strike, log: LevelBrain("random", 1), out)
    runner.client = DropsOnce(arena.url, keep_events=False, patient=True)
    run = asyncio.create_task(runner.run())
    try:
        await asyncio.wait_for(again.wait(), 30)
    finally:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    said = out.getvalue().splitlines()
    assert "reconnected: session resumed" in said, said
    assert queued == 2, (queued, said)
    assert len(runner.client._pending) == 0, runner.client._pending
