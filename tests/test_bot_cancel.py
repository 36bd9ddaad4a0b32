"""``arena bot`` stopped (Ctrl-C, SIGTERM: its run cancelled) while it logs in: the
connection is closed cleanly, so the server frees the bot's name at once rather than
holding it for the grace period of a dropped connection."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from clients.bot.brains import LevelBrain
from clients.bot.config import BotConfig
from clients.bot.runner import BotRunner
from clients.client import Client, NameTakenError


@pytest.mark.timeout(60)
async def test_a_run_cancelled_as_it_logs_in_frees_its_name(arena):
    await arena.start()
    logged_in = asyncio.Event()

    class Held(Client):
        """Logged in by the server, then held: the cancel lands inside the login."""

        async def login(self, *args: Any, **kwargs: Any) -> Any:
            await super().login(*args, **kwargs)
            logged_in.set()
            await asyncio.Event().wait()

    cfg = BotConfig(url=arena.url, name="quitter", level="random", quick_match=["collapsi"])
    runner = BotRunner(cfg.check(), lambda strike, log: LevelBrain("random", 1), io.StringIO())
    runner.client = Held(arena.url, keep_events=False, patient=True)
    run = asyncio.create_task(runner.run())
    await asyncio.wait_for(logged_in.wait(), 20)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    # (not name_taken: held 60 s, the grace, had the connection only dropped; a moment
    # for the server to see the close, which the new login may outrun)
    again = await arena.client()
    async with asyncio.timeout(5):
        while True:
            try:
                assert (await again.login("quitter", bot=True)).name == "quitter"
                break
            except NameTakenError:
                await asyncio.sleep(0.1)
