"""Solo puzzles dealt ahead in a worker process (server/deal_pool.py, issue 13):
the deal a room gets is the one the engine deals anywhere for its seed, solvable
(ruling 7), and a burst beyond the bound is refused before any room is made."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from clients.client import ArenaError
from engine.collapsi import CollapsiGame, solo_solvable
from engine.collapsi import game as game_module
from server import deal_pool

FRESH_DEAL = (
    "import sys; from engine.base import new_game; "
    "print(new_game('collapsi', variant='solo', options={'size': int(sys.argv[2])}, "
    "seed=int(sys.argv[1])).setup())"
)


async def _solo_game(arena: Any, client: Any, size: int) -> tuple[str, int, str]:
    state = await client.create_room("collapsi", variant="solo", options={"size": size}, seat=0)
    await client.ready(state.room)
    started = await client.next(type="game_started")
    game = arena.arena.rooms[state.room].state.match.game
    return state.room, game.seed, started.setup


@pytest.mark.parametrize("size", [3, 4])
async def test_a_solo_room_gets_the_deal_its_seed_gives_anywhere(arena: Any, size: int) -> None:
    await arena.start()
    ann = await arena.client("ann")
    for _ in range(2):  # the first waits for the worker, the next comes from the ready pool
        room, seed, setup = await _solo_game(arena, ann, size)
        fresh = subprocess.run(
            [sys.executable, "-c", FRESH_DEAL, str(seed), str(size)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert fresh.stdout.strip() == setup
        game = CollapsiGame.from_setup(setup, variant="solo", options={"size": size})
        assert solo_solvable(game)
        await ann.leave(room)


async def test_puzzles_beyond_the_bound_are_refused_before_a_room_is_made(
    arena: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No deal ready and a start already waiting for the worker: the next solo room is
    ``unavailable`` with ``retry_after``; the waiting one starts as usual."""
    monkeypatch.setattr(deal_pool, "READY", 0)
    monkeypatch.setattr(deal_pool, "MAX_WAITING", 1)
    await arena.start()
    deals = arena.arena.deals
    ann, bob = await arena.client("ann"), await arena.client("bob")
    state = await ann.create_room("collapsi", variant="solo", seat=0)
    # the room's check started the worker; without it, the start waits for a new one
    # (as a node's first start does), long enough to be seen waiting
    await deals.close()
    ready = asyncio.create_task(ann.ready(state.room))
    for _ in range(2000):  # (until ann's start waits for the worker: it spawns first)
        if deals.waiting:
            break
        await asyncio.sleep(0.005)
    assert deals.waiting == 1
    with pytest.raises(ArenaError) as refused:
        await bob.create_room("collapsi", variant="solo", seat=0)
    assert refused.value.code == "unavailable" and refused.value.retry_after == 1000
    assert set(arena.arena.rooms) == {state.room}
    await ready
    await ann.next(type="game_started")
    assert deals.waiting == 0
    other = await bob.create_room("collapsi", variant="solo", seat=0)  # the worker is free
    assert other.room in arena.arena.rooms


async def test_a_new_puzzle_room_is_checked_without_a_search_on_the_loop(
    arena: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trial deal that checks a ``create_room`` (seat count, labels) of a solo puzzle
    is a search too (ruling 7): it is made by the worker, never in the server's process,
    for each size and rule set, the refused request's as well."""
    searched: list[int] = []
    real = game_module.solo_solvable

    def counted(game: Any) -> bool:
        searched.append(1)
        return real(game)

    await arena.start(
        rate_burst=10**4, rate_per_second=10**4
    )  # (its welcome's game list deals each variant once, before serving)
    monkeypatch.setattr(game_module, "solo_solvable", counted)
    monkeypatch.setattr(game_module, "_SOLO_FOUND", {})  # nothing searched here before
    ann = await arena.client("ann")
    for rules in ("standard", "classic"):
        for size in (3, 4):
            state = await ann.create_room(
                "collapsi", rules=rules, variant="solo", options={"size": size}, seat=0
            )
            with pytest.raises(ArenaError) as refused:
                await ann.create_room(
                    "collapsi", rules=rules, variant="solo", options={"size": size}, seat=1
                )
            assert refused.value.code == "bad_request"
            await ann.ready(state.room)
            await ann.next(type="game_started", room=state.room)
            await ann.leave(state.room)
    assert searched == []
