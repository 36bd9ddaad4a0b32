"""A catch-up for a session connected to another node is served by that node, from the
room's log, outside the room's worker (server/cluster_catch_up.py): however long it
takes, the room's moves go on, and the asker still gets every event once, in order,
the live ones after its catch-up. Two real nodes in this process on a real Redis.

Every node's read of the room's log from the catch-up's second page on is held back
(the real store's read, waited on an event), as a slow store or a reader that does
not read would hold it; the old path read those pages in the room's worker on the
room's node, so the room could answer no move until they were read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from test_server_games import GAME_EVENTS
from test_server_resilience import start_game

from protocol.limits import MAX_EVENTS


async def test_a_catch_up_for_another_nodes_session_does_not_hold_up_the_room(
    redis_url: str, redis_prefix: str, arena: Any
) -> None:
    common = {
        "presence_url": redis_url,
        "prefix": redis_prefix,
        "lease_ttl": 30.0,
        "rate_burst": 10**6,
        "rate_per_second": 1.0,  # (the burst is plenty; a charge shows)
        "catch_up_bytes_per_token": 1024,
    }
    owner = await arena.start(node="oa", **common)
    room, (ann, bob), started = await start_game(arena)  # on node oa
    for i in range(MAX_EVENTS + 20):  # more than one page
        await ann.chat(room, f"line {i}")
    other = await arena.start(node="ob", **common)
    gate, waiting = asyncio.Event(), asyncio.Event()
    held_on: list[str] = []

    def hold(node: Any) -> None:
        real_read = node.presence.rooms.read_events

        async def read_events(room_id: str, after_seq: int = 0, limit: int | None = None) -> Any:
            if room_id == room and after_seq >= MAX_EVENTS:  # the second page on
                held_on.append(node.node)
                waiting.set()
                await gate.wait()
            return await real_read(room_id, after_seq=after_seq, limit=limit)

        node.presence.rooms.read_events = read_events

    hold(owner)
    hold(other)
    try:
        carl = await arena.client("carl")  # on node ob
        first = await carl.watch(room, since_seq=0)
        assert first.type == "catch_up" and first.more and first.events[0].seq == 1
        await asyncio.wait_for(waiting.wait(), 10)  # the second page's read has begun, and waits
        assert held_on == ["ob"]  # read by carl's node, not by the room's
        # the room answers a move meanwhile
        mover, waiter = (ann, bob) if started.to_move == 0 else (bob, ann)
        await asyncio.wait_for(mover.move(room, started.legal_moves[0]), 10)
        made = await asyncio.wait_for(waiter.next(type="move_made", room=room), 10)
    finally:
        gate.set()  # (a failure must not leave the reads waiting)
    # carl: the whole log once, in order, then the move it missed while catching up
    seen = await asyncio.wait_for(carl.next(type="move_made", room=room), 10)
    assert seen.seq == made.seq
    seqs = [e.seq for e in carl.events(room)]
    assert seqs == list(range(1, made.seq + 1)), seqs[-5:]
    assert [e.type for e in carl.events(room)][-1] in GAME_EVENTS
    # charged to carl's connection on ob by size: ~45 KiB, a token per KiB
    (conn,) = [c for c in other.connections if c.session == carl.session]
    assert conn.bucket._tokens < 10**6 - 30
