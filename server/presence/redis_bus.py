"""The node bus port in Redis (:class:`server.presence.bus.NodeBus`): channel
``P ch:node:{node}`` per node, heartbeat ``P node:{node}`` (PX TTL)."""

from __future__ import annotations

from server.presence.base import Subscription
from server.presence.bus import NodeBus
from server.presence.redis_link import RedisLink, guard
from server.presence.redis_values import ms


class RedisBus(NodeBus):
    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.k = link.k

    @guard("publish_node")
    async def publish(self, node_id: str, messages: list[str]) -> list[int]:
        channel = self.k("ch", "node", node_id)
        async with self.link.redis.pipeline(transaction=False) as p:
            for text in messages:
                p.publish(channel, text)
            return [int(n) for n in await p.execute()]

    async def subscribe(self, node_id: str) -> Subscription:
        return await self.link.subscribe(self.k("ch", "node", node_id))

    async def heartbeat(self, node_id: str, ttl: float) -> None:
        await self.link.x("SET", self.k("node", node_id), "1", "PX", ms(ttl))

    @guard("nodes_alive")
    async def alive(self, node_ids: list[str]) -> dict[str, bool]:
        if not node_ids:
            return {}
        found = await self.link.redis.mget([self.k("node", n) for n in node_ids])
        return {n: v is not None for n, v in zip(node_ids, found, strict=True)}

    @guard("node_gone")
    async def gone(self, node_id: str) -> None:
        await self.link.redis.delete(self.k("node", node_id))
