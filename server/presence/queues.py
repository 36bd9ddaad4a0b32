"""The quick-match queues port of presence: who waits in which queue, paired by
rating. The memory implementation serves the SQLite store too (queues are not kept
across a restart: a restart drops every connection, so nobody would still wait);
Redis has its own (:mod:`server.presence.redis_queues`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict

from server.presence.values import JSON, copy_json


class Queues(ABC):
    """Quick-match queues: ``presence.queues``."""

    @abstractmethod
    async def add(self, queue: str, player: str, rating: float, data: JSON) -> None:
        """Put (or re-put) ``player`` in ``queue``; ``data`` comes back with the pairing."""

    @abstractmethod
    async def cancel(self, queue: str, player: str) -> bool:
        """Take ``player`` out of ``queue``; whether it was in it."""

    @abstractmethod
    async def waiting(self, queue: str) -> list[JSON]:
        """Entries ``{"player", "rating", "data"}`` in order of arrival."""

    @abstractmethod
    async def pop_pair(self, queue: str, max_gap: float | None = None) -> tuple[JSON, JSON] | None:
        """Atomically remove and return the two entries whose ratings are closest.

        Ties go to the pair that waited longest. Only pairs whose gap is at most
        ``max_gap`` (any, if None) qualify; None when no pair does.
        """


class MemoryQueues(Queues):
    """The queues in this process (memory and SQLite stores)."""

    def __init__(self) -> None:
        self._queues: dict[str, list[JSON]] = defaultdict(list)

    async def add(self, queue: str, player: str, rating: float, data: JSON) -> None:
        entries = [e for e in self._queues[queue] if e["player"] != player]
        entries.append({"player": player, "rating": rating, "data": copy_json(data)})
        self._queues[queue] = entries

    async def cancel(self, queue: str, player: str) -> bool:
        entries = self._queues.get(queue, [])
        kept = [e for e in entries if e["player"] != player]
        self._queues[queue] = kept
        return len(kept) != len(entries)

    async def waiting(self, queue: str) -> list[JSON]:
        return copy_json(self._queues.get(queue, []))

    async def pop_pair(self, queue: str, max_gap: float | None = None) -> tuple[JSON, JSON] | None:
        entries = self._queues.get(queue, [])
        pair = closest_pair(entries, max_gap)
        if pair is None:
            return None
        i, j = pair
        a, b = entries[i], entries[j]
        self._queues[queue] = [e for k, e in enumerate(entries) if k not in (i, j)]
        return copy_json(a), copy_json(b)


def closest_pair(entries: list[JSON], max_gap: float | None) -> tuple[int, int] | None:
    """Indexes (i < j, arrival order) of the closest-rated pair; ties: longest waiting.

    Shared by every implementation so every store pairs the same way.
    """
    best: tuple[float, int, int] | None = None
    for i in range(len(entries)):
        for j in range(i + 1, len(entries)):
            gap = abs(entries[i]["rating"] - entries[j]["rating"])
            if max_gap is not None and gap > max_gap:
                continue
            key = (gap, i, j)
            if best is None or key < best:
                best = key
    return None if best is None else (best[1], best[2])
