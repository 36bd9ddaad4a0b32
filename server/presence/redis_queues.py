"""The quick-match queues port in Redis (:class:`server.presence.queues.Queues`):
``P q:{queue}`` (sorted set: player -> arrival number, from the counter ``P n``)
and ``P qd:{queue}`` (hash: player -> ``{"rating", "data"}`` JSON); a pair is taken
out under ``WATCH``, so two nodes never pair the same player twice."""

from __future__ import annotations

import json
from typing import Any

from redis.exceptions import WatchError

from server.presence.base import JSON
from server.presence.queues import Queues, closest_pair
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_values import dumps


class RedisQueues(Queues):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k

    @guard("queue_add")
    async def add(self, queue: str, player: str, rating: float, data: JSON) -> None:
        n = await self.link.redis.incr(self.k("n"))
        async with self.link.redis.pipeline(transaction=True) as p:
            p.zadd(self.k("q", queue), {player: n})
            p.hset(self.k("qd", queue), player, dumps({"rating": rating, "data": data}))
            await p.execute()

    @guard("queue_cancel")
    async def cancel(self, queue: str, player: str) -> bool:
        async with self.link.redis.pipeline(transaction=True) as p:
            p.zrem(self.k("q", queue), player)
            p.hdel(self.k("qd", queue), player)
            removed, _ = await p.execute()
        return bool(removed)

    async def _entries(self, client: Any, queue: str) -> list[JSON]:
        players = await client.zrange(self.k("q", queue), 0, -1)
        if not players:
            return []
        raws = await client.hmget(self.k("qd", queue), players)
        out = []
        for player, raw in zip(players, raws, strict=True):
            if raw is not None:
                entry = json.loads(raw)
                out.append({"player": player, "rating": entry["rating"], "data": entry["data"]})
        return out

    @guard("queue_list")
    async def waiting(self, queue: str) -> list[JSON]:
        return await self._entries(self.link.redis, queue)

    @guard("queue_pop_pair")
    async def pop_pair(self, queue: str, max_gap: float | None = None) -> tuple[JSON, JSON] | None:
        q, qd = self.k("q", queue), self.k("qd", queue)
        async with self.link.redis.pipeline(transaction=True) as p:
            while True:
                try:
                    await p.watch(q, qd)
                    entries = await self._entries(p, queue)
                    pair = closest_pair(entries, max_gap)
                    if pair is None:
                        await p.unwatch()
                        return None
                    a, b = entries[pair[0]], entries[pair[1]]
                    p.multi()
                    p.zrem(q, a["player"], b["player"])
                    p.hdel(qd, a["player"], b["player"])
                    await p.execute()
                    return a, b
                except WatchError:
                    continue  # another node changed the queue: look again
