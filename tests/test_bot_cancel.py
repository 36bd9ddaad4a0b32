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


@pytest.mark.timeout(60)
async def test_a_second_cancel_while_waiting_for_results_goes_on_with_the_stop(arena):
    """Stopped mid-game, the run waits (at most 2 s) for the games it resigned to end; a
    second Ctrl-C or SIGTERM then cuts that wait short, and the rest of the stop (the
    stop line, the logout that frees the name at once) still happens. The game's end is
    held back here, so the wait would otherwise last its 2 s."""
    await arena.start()

    class Held(Client):
        def _receive(self, msg: Any) -> None:
            if msg.type != "game_over":  # (never told: its task waits)
                super()._receive(msg)

    out = io.StringIO()
    cfg = BotConfig(url=arena.url, name="twice", level="random", quick_match=["collapsi"])
    runner = BotRunner(cfg.check(), lambda strike, log: LevelBrain("random", 1), out)
    runner.client = Held(arena.url, keep_events=False, patient=True)
    run = asyncio.create_task(runner.run())
    ann = await arena.client("ann")
    await ann.quick_match("collapsi", rated=False)
    matched = await ann.next(type="matched", timeout=20)

    async def said(text: str) -> None:
        async with asyncio.timeout(20):
            while text not in out.getvalue():
                await asyncio.sleep(0.01)

    await said(f"playing {matched.room}: ")
    run.cancel()
    await said(f"game {matched.room}: resigning (the run ended)")
    run.cancel()  # (the second, during the wait)
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert loop.time() - began < 1.5, out.getvalue()  # (not the wait's 2 s)
    assert "bot twice: stopped as asked; 1 game(s) resigned" in out.getvalue()
    again = await arena.client()
    assert (await again.login("twice", bot=True)).name == "twice"  # (logged out: free)
