"""``arena bot`` killed mid-game (a crash, no goodbye) and started again with its token:
the new run's login takes over the session the server keeps for the grace period, rooms
and all (PROTOCOL.md, "login takes over a dropped session"), and plays the game on to
its end by the rules: nothing is lost by abandonment. Real server, real processes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.test_bot_cmd import PY_ENGINE, arena_bot, assert_complete, bots, quick_match_events

TOKEN = "phoenix-token-0123456789abcdef"


def slow_snapshots(node: Any, seconds: float) -> None:
    """Find each room ``seconds`` late, as a loaded node may: a takeover's snapshots then
    come well after its ``logged_in`` (the runner counted no game, and could queue)."""
    find = node.registry.find_or_none

    async def later(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(seconds)
        return await find(*args, **kwargs)

    node.registry.find_or_none = later


@pytest.mark.timeout(120)
@pytest.mark.parametrize("slow", [False, True])
async def test_a_bot_killed_mid_game_and_started_again_plays_its_game_on(arena, slow):
    node = await arena.start()
    args = ("--token", TOKEN, "--engine", PY_ENGINE, "--quick-match", "collapsi", "--games", "1")
    async with bots(arena_bot(arena.url, "phoenix", *args)) as started:
        first = started[0]
        await first.wait_for("logged in")
        ann = await arena.client("ann")
        second = None
        async for matched, ev in quick_match_events(ann):
            if ev.type == "game_over" or ev.to_move != matched.seat:
                continue
            # the bot has moved: it dies on ann's turn
            if second is None and getattr(ev, "ply", 0) >= 2:
                first.proc.kill()
                await first.proc.wait()
                if slow:
                    slow_snapshots(node, 0.3)
                second = await arena_bot(arena.url, "phoenix", *args)
                started.append(second)  # (bots() kills it at the end, whatever fails)
                said = await second.wait_for("logged in")
                assert "taking up 1 game(s) its last run left running" in said, said
            await ann.move(matched.room, ev.legal_moves[0])
        assert second is not None, "the game ended before the bot was killed"
        assert ev.result.reason == "no_moves", ev.result
        code, lines, err = await second.finish()
        assert code == 0, err
        assert_complete(lines, 1)
        assert any(matched.room in ln for ln in second.games()), lines
