"""A catch-up is served by the asker's connection, outside the room's worker
(server.catch_up): however long it takes, the room's own moves go on, and the asker
still gets every event once, in order, the live ones after its catch-up.

The log read for the catch-up's second page is held back (the real store's read,
waited on an event), as a slow store or a reader that does not read would hold it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from test_server_games import GAME_EVENTS
from test_server_resilience import start_game

from protocol.limits import MAX_EVENTS


async def test_a_long_catch_up_does_not_hold_up_the_rooms_moves(arena: Any) -> None:
    server = await arena.start(rate_burst=10**6, rate_per_second=10**6)
    room, (ann, bob), started = await start_game(arena)
    for i in range(MAX_EVENTS + 20):  # more than one page
        await ann.chat(room, f"line {i}")
    store = server.presence.rooms
    real_read = store.read_events
    gate, waiting = asyncio.Event(), asyncio.Event()

    async def read_events(room_id: str, after_seq: int = 0, limit: int | None = None) -> Any:
        if room_id == room and after_seq >= MAX_EVENTS:  # the second page on
            waiting.set()
            await gate.wait()
        return await real_read(room_id, after_seq=after_seq, limit=limit)

    store.read_events = read_events
    carl = await arena.client("carl")
    first = await carl.watch(room, since_seq=0)
    assert first.type == "catch_up" and first.more and first.events[0].seq == 1
    await asyncio.wait_for(waiting.wait(), 10)  # the second page's read has begun, and waits
    # the room answers a move meanwhile
    mover, other = (ann, bob) if started.to_move == 0 else (bob, ann)
    await asyncio.wait_for(mover.move(room, started.legal_moves[0]), 10)
    made = await asyncio.wait_for(other.next(type="move_made", room=room), 10)
    gate.set()
    # carl: the whole log once, in order, then the move it missed while catching up
    seen = await asyncio.wait_for(carl.next(type="move_made", room=room), 10)
    assert seen.seq == made.seq
    seqs = [e.seq for e in carl.events(room)]
    assert seqs == list(range(1, made.seq + 1)), seqs[-5:]
    assert [e.type for e in carl.events(room)][-1] in GAME_EVENTS
