"""The room's one state definition (server.room_state): a room rebuilt from its log by
folding ``apply`` equals the live room, and the comparison sees a log that lost an event.

(The arena fixture runs the same check on every room of every test: tests/conftest.py.)
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from test_server_games import play_to_end

from protocol import messages as m
from server.room import room_meta
from server.room_replay import restore, snapshot
from server.room_state import RoomSettings


async def restored_from(server: Any, room_id: str, drop: str | None = None) -> dict[str, Any]:
    live = server.rooms[room_id]
    logged = await server.presence.rooms.read_events(room_id)
    if drop is not None:
        logged = [e for e in logged if e["type"] != drop]
    meta = room_meta(live, server.node)
    settings = RoomSettings.from_dict(meta)
    return snapshot(
        restore(settings, meta["members"], logged, int(asyncio.get_running_loop().time() * 1000))
    )


async def test_a_restored_room_equals_the_live_one_and_a_lost_event_shows(arena: Any) -> None:
    server = await arena.start()
    tc = m.Fischer(base_ms=600_000, increment_ms=2000)
    ann = await arena.client("ann", token="ann-secret")
    bob = await arena.client("bob", token="bob-secret")
    state = await ann.create_room("collapsi", seat=0, rated=True, time_control=tc)
    room = state.room
    await bob.join(room)
    await bob.take_seat(room, 1)
    await ann.ready(room)
    await bob.ready(room)
    over = await play_to_end(room, [ann, bob], ann, random.Random(7))
    assert over.record is not None
    await bob.offer_rematch(room)
    await ann.next(type="rematch_offered", room=room)
    live = snapshot(server.rooms[room].state)
    assert live["rematch"] == [1] and live["record"] == over.record
    assert await restored_from(server, room) == live
    # the check can fail: a log without its rematch offer restores a different room
    lost = await restored_from(server, room, drop="rematch_offered")
    assert lost["rematch"] == [] and lost != live
    # a log without its moves restores a different game
    assert (await restored_from(server, room, drop="move_made"))["game"] != live["game"]
