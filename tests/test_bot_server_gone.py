"""``arena bot`` when its server goes away for good (stopped, not restarted): it tries
to resume for ``--reconnect-s``, then stops and says why. It waited in the quick-match
queue when the server stopped, and spun: every try to queue again failed at once
without a turn of the loop, so the reconnecting never ran, nor SIGTERM's handler, and
each failed request's future was kept (10 GB in 40 minutes)."""

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
            await bot.wait_for("waiting for an opponent")
            assert await stop_node(node) == 0
            code, lines, err = await bot.finish(timeout=30)
            assert code == 1, (lines, err)
            assert lines[-1].startswith(f"stopped: cannot reconnect to {node.url}"), lines
            assert sum("waiting for an opponent" in ln for ln in lines) == 1, lines
    finally:
        await stop_node(node)
