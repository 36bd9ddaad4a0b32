"""The node bus port of presence: messages between the nodes of one arena
(:mod:`server.cluster`) and which nodes are alive. A store that has one is
:attr:`~server.presence.base.Presence.shared` (the server runs the cluster on it):
Redis (:mod:`server.presence.redis_bus`) for several nodes, and the SQLite store's
in-process bus (:class:`InProcessBus`: a cluster of one, so a restarted node takes
its rooms back the way a surviving node takes a dead one's)."""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod

from server.presence.values import MemorySubscription, Subscription


class NodeBus(ABC):
    """The node bus: ``presence.bus``."""

    @abstractmethod
    async def publish(self, node_id: str, messages: list[str]) -> list[int]:
        """Publish JSON texts to a node's channel, in order, in one round trip; how many
        subscribers got each (0: the node is not listening, the message is lost)."""

    @abstractmethod
    async def subscribe(self, node_id: str) -> Subscription:
        """The node's channel, each message decoded (registered before it returns)."""

    @abstractmethod
    async def heartbeat(self, node_id: str, ttl: float) -> None:
        """The node is alive for ``ttl`` seconds more."""

    @abstractmethod
    async def alive(self, node_ids: list[str]) -> dict[str, bool]: ...

    @abstractmethod
    async def gone(self, node_id: str) -> None:
        """The node stops (its heartbeat is dropped at once)."""


class InProcessBus(NodeBus):
    """The nodes of one process (the SQLite store: one node)."""

    def __init__(self) -> None:
        self._subs: dict[str, set[MemorySubscription]] = {}
        self._nodes: dict[str, float] = {}

    async def publish(self, node_id: str, messages: list[str]) -> list[int]:
        subs = list(self._subs.get(node_id, ()))
        for sub in subs:
            for text in messages:
                sub.publish(json.loads(text))
        return [len(subs)] * len(messages)

    async def subscribe(self, node_id: str) -> Subscription:
        return MemorySubscription(self._subs.setdefault(node_id, set()))

    async def heartbeat(self, node_id: str, ttl: float) -> None:
        self._nodes[node_id] = time.monotonic() + ttl

    async def alive(self, node_ids: list[str]) -> dict[str, bool]:
        now = time.monotonic()
        return {n: self._nodes.get(n, 0.0) > now for n in node_ids}

    async def gone(self, node_id: str) -> None:
        self._nodes.pop(node_id, None)

    async def close(self) -> None:
        """End every subscription."""
        for subs in self._subs.values():
            for sub in list(subs):
                await sub.close()
