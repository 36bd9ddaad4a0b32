"""The client library's own behaviour against a real server: typed errors, bounded memory."""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import ERRORS, ArenaError, Client, IllegalMoveError, UnknownRoomError


def test_every_error_code_has_its_exception_class() -> None:
    assert issubclass(IllegalMoveError, ArenaError) and IllegalMoveError.code == "illegal_move"
    assert ERRORS["rate_limited"].__name__ == "RateLimitedError"


async def test_errors_are_raised_as_typed_exceptions(arena: Any) -> None:
    await arena.start()
    c = await arena.client("ann")
    with pytest.raises(UnknownRoomError) as exc:
        await c.move("r-none", "1")
    assert exc.value.code == "unknown_room" and "r-none" in exc.value.message


async def test_a_long_running_client_forgets_what_it_has_read(arena: Any) -> None:
    await arena.start(rate_burst=5000, rate_per_second=5000)
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi")).room
    bot = Client(arena.url, keep_events=False)
    await bot.connect()
    try:
        await bot.login("bot", bot=True)
        await bot.join(room, role="spectator")
        for i in range(1500):
            await ann.chat(room, f"m{i}")
            await bot.next(type="chat_message", room=room)
        assert len(bot.received) < 1100
        assert bot.events(room) == [] and bot.rooms[room].seq == ann.rooms[room].seq
    finally:
        await bot.close()
