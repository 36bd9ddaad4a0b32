"""The ratings port of presence: each game's ratings by player and its leaderboard.
In memory (:class:`MemoryRatings`), written through to SQLite by the SQLite store
(:class:`server.presence.sqlite.SqliteRatings`), or in Redis
(:mod:`server.presence.redis_ratings`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict

from server.presence.values import JSON, copy_json


class Ratings(ABC):
    """Ratings: ``presence.ratings``."""

    @abstractmethod
    async def get(self, game: str, player: str) -> JSON | None: ...

    @abstractmethod
    async def put(self, game: str, ratings: dict[str, JSON]) -> None:
        """Store several players' ratings of one game at once; each has a ``rating``."""

    @abstractmethod
    async def leaderboard(self, game: str, limit: int = 50) -> list[JSON]:
        """``{"player", **rating}`` by rating, best first (ties by name)."""


class MemoryRatings(Ratings):
    def __init__(self) -> None:
        #: game -> player -> rating
        self.by_game: dict[str, dict[str, JSON]] = defaultdict(dict)

    async def get(self, game: str, player: str) -> JSON | None:
        return copy_json(self.by_game[game].get(player))

    async def put(self, game: str, ratings: dict[str, JSON]) -> None:
        for player, rating in ratings.items():
            self.by_game[game][player] = copy_json(rating)

    async def leaderboard(self, game: str, limit: int = 50) -> list[JSON]:
        rows = [{"player": p, **r} for p, r in self.by_game.get(game, {}).items()]
        rows.sort(key=lambda r: (-r["rating"], r["player"]))
        return copy_json(rows[:limit])
