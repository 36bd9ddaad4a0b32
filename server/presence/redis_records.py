"""The game records port in Redis (:class:`server.presence.records.Records`):
``P rec:{game_id}`` (the record, JSON) and ``P recs`` (sorted set: game id -> put
number from the counter ``P n``, newest last), written by one script."""

from __future__ import annotations

import json

from server.presence.base import JSON
from server.presence.records import Records, wanted
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_scripts import PUT_RECORD, Lua
from server.presence.redis_values import dumps


class RedisRecords(Records):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k
        self._put = Lua(PUT_RECORD)

    async def put(self, game_id: str, record: JSON) -> None:
        keys = [self.k("n"), self.k("rec", game_id), self.k("recs")]
        await self.link.lua(self._put, keys, game_id, dumps(record))

    async def get(self, game_id: str) -> JSON | None:
        raw = await self.link.x("GET", self.k("rec", game_id))
        return None if raw is None else json.loads(raw)

    @guard("list_records")
    async def latest(
        self, limit: int = 50, player: str | None = None, game: str | None = None, offset: int = 0
    ) -> list[JSON]:
        out: list[JSON] = []
        start, chunk = 0, max(limit, 100)
        if player is None and game is None:  # every record counts: skip in the index
            start, offset = offset, 0
        while len(out) < limit:
            ids = await self.link.redis.zrevrange(self.k("recs"), start, start + chunk - 1)
            if not ids:
                break
            start += len(ids)
            raws = await self.link.redis.mget([self.k("rec", i) for i in ids])
            for game_id, raw in zip(ids, raws, strict=True):
                if raw is None:
                    continue
                rec = json.loads(raw)
                if not wanted(rec, game, player):
                    continue
                if offset > 0:
                    offset -= 1
                    continue
                out.append({"game_id": game_id, "record": rec})
                if len(out) >= limit:
                    break
        return out
