"""What ``arena bot`` plays, beyond tests/test_bot_cmd.py: rated games under a claimed
name (``--token``, ``--rated``), and games for ever (``--games 0``)."""

from __future__ import annotations

import asyncio

import pytest

from tests.test_bot_cmd import PY_ENGINE, all_complete, arena_bot, bots

TOKENS = {"rated-a": "rated-a-token-0123456789abcdef", "rated-b": "rated-b-token-0123456789abcdef"}


@pytest.mark.timeout(120)
async def test_rated_games_under_claimed_names_put_both_bots_on_the_leaderboard(arena):
    await arena.start()
    common = ["--quick-match", "collapsi", "--games", "2", "--rated", "--clock", "fixed:3"]
    async with bots(
        *(
            arena_bot(arena.url, name, "--token", token, "--engine", PY_ENGINE, *common)
            for name, token in TOKENS.items()
        )
    ) as both:
        await all_complete(both, 2)
    viewer = await arena.client("viewer")
    board = {e.name: (e.bot, e.games) for e in await viewer.leaderboard("collapsi")}
    assert board == {"rated-a": (True, 2), "rated-b": (True, 2)}


@pytest.mark.timeout(120)
async def test_games_0_plays_on_until_stopped(arena):
    await arena.start()
    common = ["--quick-match", "collapsi", "--clock", "fixed:3"]
    async with bots(
        arena_bot(arena.url, "for-ever", "--engine", PY_ENGINE, *common, "--games", "0"),
        arena_bot(arena.url, "three", "--level", "random", *common, "--games", "3"),
    ) as (forever, three):
        await all_complete((three,), 3)

        async def three_games_over() -> None:
            while len(forever.games()) < 3:
                forever.changed.clear()
                await forever.changed.wait()

        await asyncio.wait_for(three_games_over(), 30)
        assert forever.proc.returncode is None  # its opponent is gone; it queues on
        assert len(forever.games()) == 3, forever.lines
