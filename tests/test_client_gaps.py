"""The client library fills a gap in a room's events by asking for the missing ones.

The real server sends one connection its events without gaps, so the gap is made by
a lossy relay on loopback between the real client and the real server: it drops one
event frame on its way to the client (as a buggy server or proxy would).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from clients.client import Client


@contextlib.asynccontextmanager
async def lossy_relay(target: str, drop: Callable[[dict[str, Any]], bool]) -> AsyncIterator[str]:
    """A websocket relay to ``target`` that drops the server's JSON frames ``drop`` picks."""

    async def relay(down: ServerConnection) -> None:
        async with connect(target, compression=None) as up:

            async def upward() -> None:
                async for frame in down:
                    await up.send(frame)

            async def downward() -> None:
                async for frame in up:
                    if not drop(json.loads(frame)):
                        await down.send(frame)

            tasks = [asyncio.create_task(upward()), asyncio.create_task(downward())]
            with contextlib.suppress(ConnectionClosed):
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async with serve(relay, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


@contextlib.asynccontextmanager
async def ann_behind_a_lossy_relay(
    arena: Any, dropped: list[int]
) -> AsyncIterator[tuple[Client, Client, str]]:
    """ann (JSON, behind a relay dropping bob's first chat "lost": its seq goes in
    ``dropped``) creates a room and bob joins it: (ann, bob, room). Requests: ann's
    hello, login and create_room; bob's hello, login and join."""

    def drop(frame: dict[str, Any]) -> bool:
        if frame.get("type") == "chat_message" and frame.get("text") == "lost" and not dropped:
            dropped.append(frame["seq"])
            return True
        return False

    async with lossy_relay(arena.url, drop) as url:
        ann = Client(url, binary=False)
        await ann.connect()
        try:
            await ann.login("ann")
            room = (await ann.create_room("collapsi", seat=0)).room
            bob = await arena.client("bob")
            await bob.join(room)
            yield ann, bob, room
        finally:
            await ann.close()


async def test_a_missing_event_is_asked_for_and_applied_in_order(arena: Any) -> None:
    await arena.start()
    dropped: list[int] = []
    async with ann_behind_a_lossy_relay(arena, dropped) as (ann, bob, room):
        await bob.chat(room, "lost")
        await bob.chat(room, "after")
        await bob.chat(room, "later")
        texts = [(await ann.next(type="chat_message", room=room)).text for _ in range(3)]
        assert texts == ["lost", "after", "later"]
        assert dropped, "the relay dropped the event"
        assert ann.rooms[room].gaps == [(dropped[0], dropped[0] + 1)]
        seqs = [e.seq for e in ann.events(room)]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        assert seqs[-1] == bob.rooms[room].seq
        asked = [x for x in ann.received if x.type == "catch_up"]
        assert [e.text for e in asked[0].events][:2] == ["lost", "after"]


async def test_a_refused_ask_for_missing_events_is_asked_again_after_retry_after(
    arena: Any,
) -> None:
    """The ask is rate limited (ann has just spent her last token): the client asks
    again after ``retry_after`` instead of waiting for an event or a reconnect."""
    await arena.start(rate_burst=5, rate_per_second=2.0)  # bob's 5 requests pass
    dropped: list[int] = []
    async with ann_behind_a_lossy_relay(arena, dropped) as (ann, bob, room):
        await ann.chat(room, "hi")
        await ann.ping()  # with hello, login and create_room: her 5 tokens
        await bob.chat(room, "lost")
        await bob.chat(room, "after")  # the gap: ann's ask is refused
        texts = [(await ann.next(type="chat_message", room=room)).text for _ in range(3)]
        assert texts == ["hi", "lost", "after"]
        refusals = [x for x in ann.received if x.type == "error"]
        assert [x.code for x in refusals] == ["rate_limited"]
        assert refusals[0].retry_after > 0
        seqs = [e.seq for e in ann.events(room)]
        assert seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[-1] == bob.rooms[room].seq
