"""A room runs its commands one at a time and in order, also when an idle room runs a
request at once in the caller's task (issue 18): a command that waits for I/O is not
overtaken, nor cut short when its caller is cancelled (a real server and client)."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import ArenaHarness


async def a_room(arena: ArenaHarness) -> Any:
    await arena.start()
    ann = await arena.client("ann")
    state = await ann.create_room("collapsi", seat=0)
    return arena.arena.rooms[state.room]


async def test_an_idle_room_answers_at_once_and_a_waiting_command_is_not_overtaken(
    arena: ArenaHarness,
) -> None:
    room = await a_room(arena)
    trace: list[str] = []
    release = asyncio.Event()

    async def at_once() -> str:
        trace.append("at once")
        return "answer"

    assert await room.ask(at_once) == "answer"

    async def waits() -> str:
        trace.append("waits: start")
        await release.wait()  # as a store write would
        trace.append("waits: end")
        return "waited"

    async def after() -> str:
        trace.append("after")
        return "next"

    first = asyncio.ensure_future(room.ask(waits))
    await asyncio.sleep(0)
    assert trace == ["at once", "waits: start"]
    second = asyncio.ensure_future(room.ask(after))
    posted: list[str] = []

    async def later() -> None:
        posted.append("posted")

    room.post(later)
    for _ in range(5):
        await asyncio.sleep(0)
    assert trace == ["at once", "waits: start"] and not posted  # both wait their turn
    release.set()
    assert await first == "waited" and await second == "next"
    await asyncio.sleep(0)
    assert trace == ["at once", "waits: start", "waits: end", "after"] and posted


async def test_a_cancelled_caller_does_not_cut_a_command_short(arena: ArenaHarness) -> None:
    room = await a_room(arena)
    trace: list[str] = []
    release = asyncio.Event()

    async def waits() -> None:
        trace.append("start")
        await release.wait()
        trace.append("end")

    caller = asyncio.ensure_future(room.ask(waits))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.gather(caller, return_exceptions=True)
    assert caller.cancelled() and trace == ["start"]

    async def after() -> str:
        return "ran"

    queued = asyncio.ensure_future(room.ask(after))
    release.set()
    assert await queued == "ran"
    assert trace == ["start", "end"]  # the command finished before the next one ran


async def test_a_failing_command_raises_in_its_caller_and_frees_the_room(
    arena: ArenaHarness,
) -> None:
    room = await a_room(arena)

    async def fails() -> None:
        raise ValueError("refused")

    try:
        await room.ask(fails)
    except ValueError as exc:
        assert str(exc) == "refused"
    else:
        raise AssertionError("the command's error was not raised")

    async def fine() -> int:
        return 7

    assert await room.ask(fine) == 7
