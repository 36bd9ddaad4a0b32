"""The lobby feed when the server falls behind: real server, real clients on loopback."""

from __future__ import annotations

from typing import Any

from server.presence.memory import SUBSCRIBER_BACKLOG


async def test_a_dropped_lobby_feed_is_followed_by_a_fresh_snapshot(arena: Any) -> None:
    """More lobby changes at once than the node's own feed may hold back: the feed is
    dropped and reopened, and subscribers get the lobby as it is, then events again."""
    a = await arena.start(out_queue=4 * SUBSCRIBER_BACKLOG)
    watcher = await arena.client()
    ann = await arena.client("ann")
    room = (await ann.create_room("collapsi", seat=0)).room
    other = (await ann.create_room("collecto", seat=0)).room
    assert {r.room for r in await watcher.subscribe_lobby()} == {room, other}
    # A burst (as from many rooms, or other nodes) with no turn for the feed in between:
    # the feed is dropped, and the change after it is lost to it.
    entry = a.rooms[room].summary_wire()
    for _ in range(SUBSCRIBER_BACKLOG + 1):
        await a.presence.lobby.upsert(room, entry)
    await a.presence.lobby.remove(other)  # lost with the dropped feed
    snapshot = await watcher.next(type="room_list", where=lambda x: x.re is None, timeout=20)
    assert [r.room for r in snapshot.rooms] == [room]
    assert all(x.room != other for x in watcher.received if x.type == "room_removed")
    # events follow, and a room in the snapshot is updated, not added again
    bob = await arena.client("bob")
    await bob.join(room)
    await bob.take_seat(room)
    update = await watcher.next(type=("room_added", "room_updated"), where=_seated(room, "bob"))
    assert update.type == "room_updated"


def _seated(room: str, name: str) -> Any:
    def check(ev: Any) -> bool:
        return ev.summary.room == room and any(
            s.player is not None and s.player.name == name for s in ev.summary.seats
        )

    return check
