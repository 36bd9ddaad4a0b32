"""The ratings port in Redis (:class:`server.presence.ratings.Ratings`):
``P rating:{game}`` (hash: player -> rating JSON) and ``P board:{game}`` (sorted
set: player -> minus rating, so ties go by name), written together."""

from __future__ import annotations

import json

from server.presence.base import JSON
from server.presence.ratings import Ratings
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_values import dumps


class RedisRatings(Ratings):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k

    async def get(self, game: str, player: str) -> JSON | None:
        raw = await self.link.x("HGET", self.k("rating", game), player)
        return None if raw is None else json.loads(raw)

    @guard("put_ratings")
    async def put(self, game: str, ratings: dict[str, JSON]) -> None:
        if not ratings:
            return
        async with self.link.redis.pipeline(transaction=True) as p:
            p.hset(self.k("rating", game), mapping={n: dumps(r) for n, r in ratings.items()})
            p.zadd(self.k("board", game), {n: -float(r["rating"]) for n, r in ratings.items()})
            await p.execute()

    @guard("leaderboard")
    async def leaderboard(self, game: str, limit: int = 50) -> list[JSON]:
        if limit <= 0:
            return []
        players = await self.link.redis.zrange(self.k("board", game), 0, limit - 1)
        if not players:
            return []
        raws = await self.link.redis.hmget(self.k("rating", game), players)
        return [
            {"player": p, **json.loads(raw)}
            for p, raw in zip(players, raws, strict=True)
            if raw is not None
        ]
