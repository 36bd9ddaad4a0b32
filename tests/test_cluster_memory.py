"""A node's bookkeeping for rooms: its cursors for rooms of other nodes (``Cluster.cursors``,
the last seq delivered to a local session) go when the session leaves such a room or the
room closes, so a long-lived session does not accumulate them; and a node shutting down
does not take back a room it released. Real nodes in this process share a real Redis."""

from __future__ import annotations

from typing import Any

import pytest

from clients.client import Client


@pytest.mark.parametrize("who_leaves", ["spectator", "owner"])
async def test_cursors_of_rooms_left_or_closed_are_forgotten(
    redis_url: str, redis_prefix: str, arena: Any, who_leaves: str
) -> None:
    common = {"presence_url": redis_url, "prefix": redis_prefix, "lease_ttl": 30.0}
    a = await arena.start(node="ca", **common)
    ann = Client(arena.url)
    await ann.connect()
    b = await arena.start(node="cb", **common)
    try:
        await ann.login("ann")
        rooms = [(await ann.create_room("collapsi", seat=0)).room for _ in range(3)]
        cat = await arena.client("cat")  # on node cb, watching rooms of node ca
        for room in rooms:
            await cat.watch(room)
            await ann.chat(room, "hello")
            await cat.next(type="chat_message", room=room)
        assert {(cat.session, r) for r in rooms} <= set(b.cluster.cursors)
        for room in rooms:
            if who_leaves == "spectator":
                await cat.leave(room)
            else:  # the room's only player leaves: it closes
                await ann.leave(room)
                await cat.next(type="room_closed", room=room)
        for _ in range(2):
            await b.cluster.sweep(lobby=True)
        assert [k for k in b.cluster.cursors if k[0] == cat.session] == []
        assert (a.rooms == {}) is (who_leaves == "owner")
    finally:
        await ann.close()


async def test_a_node_shutting_down_does_not_take_back_a_room_it_released(
    redis_url: str, redis_prefix: str, arena: Any
) -> None:
    """Shutdown stops a room and releases its lease; a request forwarded to the node in
    the moment before it is gone must not make it the owner again (the lease would then
    lapse instead of being free at once for the node that takes the game on)."""
    node = await arena.start(node="ca", presence_url=redis_url, prefix=redis_prefix)
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi", seat=0)).room
    node.stopping = True  # Arena.shutdown's first step, then for each room:
    await node.rooms[room].stop()
    await node.presence.leases.release(room, "ca")
    assert await node.cluster.take_over(room) is None
    assert await node.presence.leases.owner(room) is None
