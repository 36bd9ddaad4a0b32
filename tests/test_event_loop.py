"""``arena serve --event-loop``: uvloop where it is installed (auto), asyncio's own loop
when asked; either plays a game (a real server process and real clients)."""

from __future__ import annotations

import sys

import pytest
from arena_process import start_node, stop_node
from redis_server import free_port

from clients.client import Client


@pytest.mark.parametrize(("choice", "loop"), [("auto", "uvloop"), ("asyncio", "asyncio")])
async def test_the_server_runs_and_plays_on_the_loop_asked_for(choice: str, loop: str) -> None:
    pytest.importorskip("uvloop")  # a dependency wherever CPython runs on Linux or macOS
    port = free_port()
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
    argv += ["--store", "memory", "--log-format", "json", "--event-loop", choice]
    node = await start_node(argv, name=choice)
    try:
        assert node.events("listening")[0]["event_loop"] == loop
        ann, bob = Client(node.url), Client(node.url)
        for c, name in ((ann, "ann"), (bob, "bob")):
            await c.connect()
            await c.login(name)
        try:
            room = (await ann.create_room("collapsi", seat=0)).room
            await bob.join(room)
            await bob.take_seat(room)
            await ann.ready(room)
            await bob.ready(room)
            started = await ann.next(type="game_started")
            mover = [ann, bob][started.to_move]
            await mover.move(room, started.legal_moves[0])
            made = await ann.next(type="move_made")
            assert made.ply == 1 and made.move == started.legal_moves[0]
        finally:
            await ann.close()
            await bob.close()
    finally:
        await stop_node(node)
