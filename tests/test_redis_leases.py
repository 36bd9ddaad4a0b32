"""A live node keeps its rooms' leases while its event loop is saturated.

Real Redis, a real server in this process, real clients. A task that blocks the
loop 30 ms at a time stands for a node busy with work (as under the 500-game
bench load, where ``lease_lost`` showed up): a renewal that needs a loop turn
per room then takes longer than a lease lasts, the leases lapse and the node
retires live rooms. Renewing every room in one call keeps them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from server.presence.redis import RedisPresence

TTL = 1.5
ROOMS = 60


async def _hog_loop(seconds: float, block: float = 0.03) -> None:
    """Keep the event loop busy: block it ``block`` s, yield once, again."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(block)  # blocking on purpose: a saturated loop
        await asyncio.sleep(0)


async def test_busy_node_keeps_the_leases_of_its_live_rooms(
    redis_url: str, redis_prefix: str, arena: Any
) -> None:  # (the arena stops before the prefix's keys are deleted)
    node = await arena.start(
        presence_url=redis_url,
        prefix=redis_prefix,
        lease_ttl=TTL,
        max_rooms_per_player=ROOMS,
        node="busy",
        rate_burst=1000,
    )
    ann = await arena.client("Ann")
    rooms = [(await ann.create_room("collapsi", seat=0)).room for _ in range(ROOMS)]
    assert set(rooms) <= set(node.rooms)
    await _hog_loop(3 * TTL)
    await asyncio.sleep(TTL / 3)  # one more renewal with the loop free
    check = RedisPresence(redis_url, prefix=redis_prefix)
    try:
        owners = await check.leases.owners(rooms)
    finally:
        await check.close()
    assert [r for r in rooms if owners[r] != "busy"] == []
    assert [r for r in rooms if r not in node.rooms or node.rooms[r].closed] == []
