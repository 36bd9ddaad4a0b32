"""The leases port in Redis (:class:`server.presence.leases.Leases`): ``P lease:{id}``,
the owning node, with a PX TTL its owner renews. Appends are fenced by it in their
script (:mod:`server.presence.redis_rooms`)."""

from __future__ import annotations

import asyncio

from server.presence.leases import Leases
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_scripts import ACQUIRE, RELEASE, RENEW_MANY, Lua
from server.presence.redis_values import ms


class RedisLeases(Leases):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k
        self._acquire = Lua(ACQUIRE)
        self._release = Lua(RELEASE)
        self._renew_many = link.redis.register_script(RENEW_MANY)

    async def acquire(self, room_id: str, node_id: str, ttl: float) -> bool:
        keys = [self.k("lease", room_id)]
        return bool(await self.link.lua(self._acquire, keys, node_id, ms(ttl)))

    @guard("renew_rooms")
    async def renew(self, room_ids: list[str], node_id: str, ttl: float) -> list[str]:
        """One script per 1,000 rooms, concurrently, on pooled connections of their own
        (not queued behind the lean connection's commands)."""
        chunks = [room_ids[i : i + 1000] for i in range(0, len(room_ids), 1000)]
        args = [node_id, ms(ttl)]
        redis = self.link.redis
        results = await asyncio.gather(
            *(self._renew_many([self.k("lease", r) for r in c], args, redis) for c in chunks)
        )
        return [c[i - 1] for c, indexes in zip(chunks, results, strict=True) for i in indexes]

    async def release(self, room_id: str, node_id: str) -> bool:
        return bool(await self.link.lua(self._release, [self.k("lease", room_id)], node_id))

    async def owner(self, room_id: str) -> str | None:
        return await self.link.x("GET", self.k("lease", room_id))

    @guard("room_owners")
    async def owners(self, room_ids: list[str]) -> dict[str, str | None]:
        """One ``MGET``."""
        if not room_ids:
            return {}
        owners = await self.link.redis.mget([self.k("lease", r) for r in room_ids])
        return dict(zip(room_ids, owners, strict=True))
