"""Promises of the server that other tests only touch in passing: a claimed name stays
claimed while its owner is away, the Fischer increment reaches the wire, and shutdown
waits for the records being written. Real server, real clients on loopback."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import strong
from test_server_games import ready_all, seat_players

from clients.client import Client, NameTakenError
from protocol import messages as m
from server.app import Config, running


async def test_a_claimed_name_needs_its_token_while_its_owner_is_offline(arena: Any) -> None:
    await arena.start()
    ann = await arena.client()
    await ann.login("ann", token=strong("ann-secret"))
    await ann.logout()  # the session is over: nobody holds the name online
    other = await arena.client()
    with pytest.raises(NameTakenError):
        await other.login("ann", token=strong("not-ann"))
    with pytest.raises(NameTakenError):
        await other.login("Ann")  # nor as a guest
    assert (await other.login("ann", token=strong("ann-secret"))).name == "ann"


async def test_the_fischer_increment_is_added_to_the_movers_clock(arena: Any) -> None:
    await arena.start()
    tc = m.Fischer(base_ms=60_000, increment_ms=30_000)
    room, (ann, bob) = await seat_players(arena, "collapsi", ["ann", "bob"], time_control=tc)
    await ready_all(room, [ann, bob])
    started = await ann.next(type="game_started", room=room)
    mover = started.to_move
    assert started.clock.remaining_ms == [60_000, 60_000] and started.clock.running == mover
    await [ann, bob][mover].move(room, started.legal_moves[0])
    moved = await ann.next(type="move_made", room=room)
    # base - thinking time + increment: above the base unless the move took 30 s
    assert moved.clock.remaining_ms[mover] > 60_000
    assert moved.clock.remaining_ms[1 - mover] == 60_000
    assert moved.clock.running == 1 - mover


async def test_shutdown_waits_for_the_records_being_written(tmp_path: Path) -> None:
    """The disk is held (the one worker thread that writes records is busy) when a game
    ends: shutdown must not finish before the record is written."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    disk = threading.Event()
    data = tmp_path / "data"
    async with running(Config(port=0, data_dir=str(data))) as a:
        try:
            await _end_a_game_then_stop(a, loop, disk, data)
        finally:
            disk.set()  # never leave the worker held, whatever failed


async def _end_a_game_then_stop(
    a: Any, loop: asyncio.AbstractEventLoop, disk: threading.Event, data: Path
) -> None:
    url = f"ws://127.0.0.1:{a.config.port}"
    ann, bob = Client(url), Client(url)
    await ann.connect()
    await bob.connect()
    await ann.login("ann", token=strong("a"))
    await bob.login("bob", token=strong("b"))
    state = await ann.create_room("collapsi", seat=0)
    await bob.join(state.room)
    await bob.take_seat(state.room, 1)
    await ready_all(state.room, [ann, bob])
    await ann.next(type="game_started", room=state.room)
    held = loop.run_in_executor(None, disk.wait)
    await bob.resign(state.room)
    over = await ann.next(type="game_over", room=state.room)
    stopping = asyncio.create_task(a.shutdown())
    done, _ = await asyncio.wait({stopping}, timeout=1.0)
    path = data / "records" / f"{over.record}.json"
    assert not done and not path.exists(), "shutdown finished before the record was written"
    disk.set()
    await held
    await stopping
    assert json.loads(path.read_text())["players"] == ["ann", "bob"]
    await ann.close()
    await bob.close()
