"""When the node holding a player's connection dies (not the room's owner), the other
players see ``player_disconnected`` for it, then ``player_reconnected`` once it has
resumed its session on a surviving node, and the game goes on (issue 13: they saw
neither). Real ``arena serve`` processes on a real Redis; the node dies by SIGKILL."""

from __future__ import annotations

from test_multinode import client, cluster, play, retry, start_game


async def test_the_others_see_a_player_whose_node_died_leave_and_come_back(
    redis_url: str, redis_prefix: str
) -> None:
    async with cluster(redis_url, redis_prefix, ["d1", "d2"]) as (d1, d2):
        ann, bob = await client(d1.url, "ann"), await client(d2.url, "bob")
        try:
            room = await start_game(ann, bob)  # owned by d1, bob on d2
            acked: list[str] = []
            assert not await play({0: ann, 1: bob}, room, acked, 2)
            d2.kill9()
            await d2.proc.wait()
            gone = await ann.next(type="player_disconnected", room=room, timeout=15)
            assert (gone.name, gone.seat) == ("bob", 1)
            bob.url = d1.url  # (the surviving node: the room's, as it happens)
            resumed = await retry(bob.reconnect)
            assert room in resumed.rooms
            back = await ann.next(type="player_reconnected", room=room, timeout=15)
            assert (back.name, back.seat) == ("bob", 1)
            assert not await play({0: ann, 1: bob}, room, acked, 1)
        finally:
            for c in (ann, bob):
                await c.close()
