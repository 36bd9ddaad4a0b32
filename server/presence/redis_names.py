"""The name claims port in Redis (:class:`server.presence.names.Names`): ``P names``,
a hash of name key -> secret hash (claims never expire)."""

from __future__ import annotations

from server.presence.base import name_key, secret_hash
from server.presence.names import Names
from server.presence.redis_link import RedisLink, guard


class RedisNames(Names):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.key = link.k("names")

    @guard("claim_name")
    async def claim(self, name: str, secret: str) -> bool:
        h = secret_hash(secret)
        async with self.link.redis.pipeline(transaction=True) as p:
            p.hsetnx(self.key, name_key(name), h)
            p.hget(self.key, name_key(name))
            _, held = await p.execute()
        return held == h

    async def claimed(self, name: str) -> bool:
        return bool(await self.link.x("HEXISTS", self.key, name_key(name)))
