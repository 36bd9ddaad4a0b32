"""A request for a room whose node died, sent before another node may take the room
over (its lease still stands): answered ``unavailable`` with ``retry_after`` at once,
not after waiting for the dead node (issue 13); once the lease lapses, the same
request goes through on the new owner. Two real nodes on a real Redis."""

from __future__ import annotations

import pytest
from test_multinode import client, cluster, retry, start_game

from clients.client import ArenaError
from server.presence.redis import RedisPresence


async def test_a_room_whose_node_died_answers_unavailable_with_retry_after(
    redis_url: str, redis_prefix: str, presence: RedisPresence
) -> None:
    async with cluster(redis_url, redis_prefix, ["u1", "u2"], lease_ttl=8) as (n1, n2):
        ann, bob = await client(n1.url, "ann"), await client(n2.url, "bob")
        try:
            room = await start_game(ann, bob)
            assert await presence.leases.owner(room) == "u1"
            n1.kill9()
            await n1.proc.wait()
            with pytest.raises(ArenaError) as refused:
                await bob.chat(room, "are you there?")
            assert refused.value.code == "unavailable"
            assert refused.value.retry_after == 8000
            # answered while the dead node's lease still stood: not by waiting it out
            assert await presence.leases.owner(room) == "u1"
            await retry(lambda: bob.chat(room, "hello again"), timeout=30)
            heard = await bob.next(type="chat_message", room=room)
            assert heard.text == "hello again"
        finally:
            for c in (ann, bob):
                await c.close()
