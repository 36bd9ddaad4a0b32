"""A player resumes on another node while the room's owner has died and the room is
being taken over, and the game goes on meanwhile: each room event reaches the player
once, in order, with no gap (issue 13: an empty catch_up, then a live event, then a
second catch_up repeating it, was seen). Two real nodes on a real Redis."""

from __future__ import annotations

import asyncio

from test_multinode import assert_gap_free, client, cluster, last_turn, play, retry, start_game
from test_multinode_failover import assert_no_repeats, heard

from server.presence.redis import RedisPresence


async def test_a_player_resuming_while_the_room_moves_hears_each_event_once(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    async with cluster(redis_url, redis_prefix, ["t1", "t2"], lease_ttl=1) as (n1, n2):
        ann, bob = await client(n1.url, "ann"), await client(n2.url, "bob")
        try:
            room = await start_game(ann, bob)
            seats = {0: ann, 1: bob}
            acked: list[str] = []
            assert not await play(seats, room, acked, 3)
            n1.kill9()
            await n1.proc.wait()
            ann.url = n2.url

            async def bob_moves() -> None:  # the game goes on while ann comes back
                while True:
                    to_move, legal = last_turn(bob, room)
                    if to_move != 1:
                        await asyncio.sleep(0.02)
                        continue
                    await retry(lambda mv=legal[0]: bob.move(room, mv), timeout=30)
                    acked.append(legal[0])
                    return

            await asyncio.gather(retry(ann.reconnect, timeout=30), bob_moves())
            await heard(ann, room, len(acked))
            assert await play(seats, room, acked, 200)
            for c in (ann, bob):
                assert_gap_free(c, room)
                assert_no_repeats(c, room)
                assert [e.move for e in c.events(room) if e.type == "move_made"] == acked
        finally:
            for c in (ann, bob):
                await c.close()
