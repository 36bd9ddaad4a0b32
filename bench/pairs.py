"""How the server benchmarks' pairs of players open each game, shared so that
``bench/server.py`` (over sockets) and ``bench/server_cpu.py`` (in one process)
measure the same requests."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol


class Seat(Protocol):
    """A bench player: it sends requests and notes its room, seat and game's end."""

    room: str | None
    seat: int | None
    over: asyncio.Event

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]: ...


async def open_game(a: Seat, b: Seat, game: str = "collapsi", rules: str = "standard") -> str:
    """A fresh room as a quick match would open it: ``a`` creates it in seat 0, ``b``
    joins and sits in seat 1, both say ready (the game starts); the room's id."""
    a.over, b.over = asyncio.Event(), asyncio.Event()
    state = await a.request({"type": "create_room", "game": game, "rules": rules, "seat": 0})
    room = state["room"]
    a.room, a.seat, b.room, b.seat = room, 0, room, 1
    await b.request({"type": "join_room", "room": room})
    await b.request({"type": "take_seat", "room": room, "seat": 1})
    await a.request({"type": "ready", "room": room})
    await b.request({"type": "ready", "room": room})
    return room
