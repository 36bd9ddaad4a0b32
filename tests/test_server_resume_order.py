"""A resumed session gets its missed events and the live ones strictly in seq order.

The server attaches the new connection and sends each room's catch-up; events the
room produces meanwhile must not overtake the catch-up (PROTOCOL.md, Sessions:
resume). Other members act in a tight loop while the player resumes, many times over,
so that the window between the two is hit.
"""

from __future__ import annotations

import asyncio
from typing import Any

from protocol import messages as m
from protocol.codec import to_wire
from protocol.limits import MAX_EVENTS

TRIALS = 20
CHATTERS = 3
BATCH = 10


async def test_events_during_a_resume_come_after_the_catch_up(arena: Any) -> None:
    await arena.start(grace=30, rate_burst=100_000, rate_per_second=100_000)
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi", seat=0)).room
    others = [await arena.client(f"p{i}") for i in range(CHATTERS)]
    for c in others:
        await c.join(room)
    for trial in range(TRIALS):
        ann.abort()
        stop = asyncio.Event()

        async def chatter(c: Any, stop: asyncio.Event = stop) -> None:
            while not stop.is_set():  # frames in flight all the time, acks read in batches
                for _ in range(BATCH):
                    await c.send(m.Chat(room=room, text="busy"))
                await c.chat(room, "busy")

        tasks = [asyncio.create_task(chatter(c)) for c in others]
        await ann.reconnect()
        await ann.next(type=("catch_up", "room_state"), room=room)
        stop.set()
        await asyncio.gather(*tasks)
        await others[0].chat(room, f"done {trial}")
        await ann.next(
            type="chat_message", room=room, where=lambda e, t=trial: e.text == f"done {t}"
        )
        track = ann.rooms[room]
        assert track.gaps == [], f"trial {trial}: events overtook the catch-up"
        logged = await arena.arena.presence.rooms.read_events(room)
        seqs = [e.seq for e in ann.events(room)]
        assert seqs == list(range(seqs[0], len(logged) + 1)), f"trial {trial}"
        assert [e.type for e in ann.events(room)] == [e["type"] for e in logged[seqs[0] - 1 :]]


async def test_a_long_catch_up_is_the_log_in_order_then_live_events(arena: Any) -> None:
    """Re-watching from seq 0 a log longer than one catch_up: the chunks together are the
    room's log, wire for wire, in order, each with the request's re; live events follow."""
    await arena.start(rate_burst=100_000, rate_per_second=100_000)
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi", seat=0)).room
    for i in range(2 * MAX_EVENTS + 7):
        await ann.send(m.Chat(room=room, text=f"c{i}"))
    await ann.chat(room, "last")
    watchers = [await arena.client(binary=binary) for binary in (True, False)]
    for w in watchers:
        await w.send(m.Watch(id=77, room=room, since_seq=0))
        await w.next(type="catch_up", where=lambda c: not c.more)
    await ann.chat(room, "live")
    logged = await arena.arena.presence.rooms.read_events(room)
    for w in watchers:
        await w.next(type="chat_message", where=lambda e: e.text == "live")
        chunks = [x for x in w.received if x.type == "catch_up"]
        assert [c.more for c in chunks] == [True, True, False]
        assert {c.re for c in chunks} == {77}
        caught = [to_wire(e) for c in chunks for e in c.events]
        assert caught == logged[:-1]  # every event but the live one, in seq order
        assert [repr(e) for e in caught] == [repr(e) for e in logged[:-1]]  # key order too
        live = [x for x in w.received if x.type == "chat_message" and x.re is None]
        assert live[-1].text == "live" and w.received.index(chunks[-1]) < w.received.index(live[-1])
        assert [e.seq for e in w.events(room)] == list(range(1, len(logged) + 1))


async def test_a_connection_that_watched_then_resumed_leaves_no_ghost_spectator(
    arena: Any,
) -> None:
    await arena.start(grace=30)
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi", seat=0)).room
    other = (await ann.create_room("collecto", seat=0)).room
    bob = await arena.client("bob")
    await bob.join(other)
    bob.abort()
    watcher = await arena.client()  # anonymous: watches, then takes over bob's session
    await watcher.watch(room)
    assert [r.spectators for r in await ann.list_rooms() if r.room == room] == [1]
    watcher.resume_token = bob.resume_token
    await watcher.request(m.Resume(token=bob.resume_token))
    assert [r.spectators for r in await ann.list_rooms() if r.room == room] == [0]
    assert set(arena.arena.rooms[room].members) == {ann.session}


async def test_a_room_that_closes_during_a_resume_still_says_so(arena: Any) -> None:
    """bob watches two rooms and resumes; while the first room's catch-up is held up, the
    second room closes (its only player leaves). No catch-up can come for a room that is
    gone, so its ``room_closed`` must reach bob on its own (PROTOCOL.md, resume)."""
    server = await arena.start(grace=30)
    ann, bob = await arena.client("ann"), await arena.client("bob")
    first, last = sorted([(await ann.create_room("collapsi", seat=0)).room for _ in range(2)])
    for room in (first, last):
        await bob.watch(room)
        await ann.chat(room, "hi")
        await bob.next(type="chat_message", room=room)
    bob.abort()
    gate = asyncio.Event()

    async def held_up() -> None:  # the first room's actor is busy until the gate opens
        await gate.wait()

    server.rooms[first].post(held_up)
    resumed = await bob.reconnect()  # the server now resumes `first`, then `last`
    assert resumed.rooms == [first, last]
    await ann.leave(last)
    gate.set()
    closed = await bob.next(type="room_closed", room=last, timeout=5)
    assert closed.reason == "empty"
    await bob.next(type=("catch_up", "room_state"), room=first)
