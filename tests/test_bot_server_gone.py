"""``arena bot`` when its server goes away for good (stopped, not restarted): it tries
to resume for ``--reconnect-s``, then stops and says why. When the server stopped with
the bot's quick-match request in flight (the line is said before the request is sent:
in about half the runs beside another test), the bot waited forever for a resume that
had already failed."""

from __future__ import annotations

import pytest

from tests.arena_process import serve_command, start_node, stop_node
from tests.test_bot_cmd import arena_bot, bots


@pytest.mark.timeout(90)
async def test_a_bot_waiting_for_a_match_stops_when_its_server_is_gone(tmp_path):
    node = await start_node(serve_command("--store", "memory"))
    try:
        args = ("--level", "random", "--quick-match", "collapsi", "--reconnect-s", "3")
        async with bots(arena_bot(node.url, "orphan", *args)) as (bot,):
            # (the clock named: quick match pairs only those asking for the same)
            await bot.wait_for("looking for a casual game of collapsi (clock none), waiting")
            assert await stop_node(node) == 0
            code, lines, err = await bot.finish(timeout=30)
            assert code == 1, (lines, err)
            assert lines[-1].startswith(f"stopped: cannot reconnect to {node.url}"), lines
            assert sum("waiting for an opponent" in ln for ln in lines) == 1, lines
    finally:
        await stop_node(node)
