"""The lobby port in Redis (:class:`server.presence.lobby.Lobby`): ``P lobby``, a hash
of room id -> summary (msgpack; JSON as older versions wrote it is read too), and its
feed on ``P ch:lobby``; each change and its announcement in one script, so they never
part. A room's append may set its entry (:mod:`server.presence.redis_rooms`)."""

from __future__ import annotations

from server.presence.lobby import Lobby
from server.presence.redis_link import RedisLink
from server.presence.redis_scripts import LOBBY_REMOVE, LOBBY_UPSERT, Lua
from server.presence.redis_values import UPSERT_HEAD, dumps, load, pack
from server.presence.values import JSON, Subscription


class RedisLobby(Lobby):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.key, self.channel = link.k("lobby"), link.k("ch", "lobby")
        self._upsert = Lua(LOBBY_UPSERT)
        self._remove = Lua(LOBBY_REMOVE)

    async def upsert(self, room_id: str, summary: JSON) -> None:
        packed = pack(summary)
        keys = [self.key, self.channel]
        await self.link.lua(self._upsert, keys, room_id, packed, UPSERT_HEAD + packed)

    async def remove(self, room_id: str) -> None:
        event = dumps({"op": "remove", "room_id": room_id})
        await self.link.lua(self._remove, [self.key, self.channel], room_id, event)

    async def entries(self) -> list[JSON]:
        flat = await self.link.x("HGETALL", self.key, raw=True)
        entries = dict(zip(flat[::2], flat[1::2], strict=True))
        return [load(entries[k]) for k in sorted(entries)]

    async def subscribe(self) -> Subscription:
        return await self.link.subscribe(self.channel)
