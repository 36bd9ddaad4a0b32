"""The game records port of presence: finished games' records, newest first. In
memory (:class:`MemoryRecords`), in the SQLite database
(:class:`server.presence.sqlite_ports.SqliteRecords`) or in Redis
(:mod:`server.presence.redis_records`)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from server.presence.values import JSON, copy_json


def wanted(rec: JSON, game: str | None, player: str | None) -> bool:
    """Whether a record is one a listing asked for (its game, one of its players)."""
    return (game is None or rec.get("game") == game) and (
        player is None or player in rec.get("players", [])
    )


class Records(ABC):
    """Game records: ``presence.records``."""

    @abstractmethod
    async def put(self, game_id: str, record: JSON) -> None:
        """Keep a finished game's record; its top-level ``game`` (str) and ``players``
        (list of names) are what :meth:`latest` filters on. A re-put counts as newest."""

    @abstractmethod
    async def get(self, game_id: str) -> JSON | None: ...

    @abstractmethod
    async def latest(
        self, limit: int = 50, player: str | None = None, game: str | None = None, offset: int = 0
    ) -> list[JSON]:
        """``{"game_id", "record"}`` newest first, filtered by player name or game,
        skipping the first ``offset`` that match (paging: ``list_records``)."""


class MemoryRecords(Records):
    def __init__(self) -> None:
        self._records: dict[str, JSON] = {}

    async def put(self, game_id: str, record: JSON) -> None:
        self._records.pop(game_id, None)  # re-put counts as newest
        self._records[game_id] = copy_json(record)

    async def get(self, game_id: str) -> JSON | None:
        return copy_json(self._records.get(game_id))

    async def latest(
        self, limit: int = 50, player: str | None = None, game: str | None = None, offset: int = 0
    ) -> list[JSON]:
        out: list[JSON] = []
        for game_id in reversed(self._records):
            rec = self._records[game_id]
            if not wanted(rec, game, player):
                continue
            if offset > 0:
                offset -= 1
                continue
            out.append({"game_id": game_id, "record": copy_json(rec)})
            if len(out) >= limit:
                break
        return out
