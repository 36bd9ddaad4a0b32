"""The sessions port in Redis (:class:`server.presence.sessions.Sessions`):
``P sess:{id}`` (hash: ``d`` data JSON, ``t`` token hash; PX TTL) and
``P tok:{hash}`` (the session id a resume token belongs to; the same TTL)."""

from __future__ import annotations

import json

from server.presence.redis_link import RedisLink, guard
from server.presence.redis_scripts import TOUCH_SESSION, UPDATE_SESSION, UPDATE_SESSIONS, Lua
from server.presence.redis_values import dumps, ms
from server.presence.sessions import Sessions
from server.presence.values import JSON, secret_hash


class RedisSessions(Sessions):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k
        self._update = Lua(UPDATE_SESSION)
        self._update_many = Lua(UPDATE_SESSIONS)
        self._touch = Lua(TOUCH_SESSION)

    @guard("create_session")
    async def create(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        h = secret_hash(token)
        skey, tkey = self.k("sess", session_id), self.k("tok", h)
        async with self.link.redis.pipeline(transaction=True) as p:
            p.delete(skey)
            p.hset(skey, mapping={"d": dumps(data), "t": h})
            p.pexpire(skey, ms(ttl))
            p.set(tkey, session_id, px=ms(ttl))
            await p.execute()

    async def get(self, session_id: str) -> JSON | None:
        raw = await self.link.x("HGET", self.k("sess", session_id), "d")
        return None if raw is None else json.loads(raw)

    async def update(self, session_id: str, data: JSON) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self.link.lua(self._update, keys, dumps(data)))

    async def update_many(self, data: dict[str, JSON]) -> None:
        """One script (for a loop step's saves)."""
        if data:
            keys = [self.k("sess", i) for i in data]
            await self.link.lua(self._update_many, keys, *map(dumps, data.values()))

    async def touch(self, session_id: str, ttl: float) -> bool:
        keys = [self.k("sess", session_id)]
        return bool(await self.link.lua(self._touch, keys, ms(ttl), self.k("tok", "")))

    @guard("resume_session")
    async def resume(self, token: str) -> tuple[str, JSON] | None:
        h = secret_hash(token)
        session_id = await self.link.redis.get(self.k("tok", h))
        if session_id is None:
            return None
        skey = self.k("sess", session_id)
        raw, held = await self.link.redis.hmget(skey, ["d", "t"])
        if raw is None or held != h:
            return None
        return session_id, json.loads(raw)

    @guard("end_session")
    async def end(self, session_id: str) -> None:
        skey = self.k("sess", session_id)
        h = await self.link.redis.hget(skey, "t")
        keys = [skey] + ([self.k("tok", h)] if h else [])
        await self.link.redis.delete(*keys)
