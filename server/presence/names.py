"""The name claims port of presence: a player name belongs to whoever first claimed
it with a secret (kept hashed), regardless of case and lookalikes
(:func:`server.presence.base.name_key`). In memory (:class:`MemoryNames`), written
through to SQLite (:class:`server.presence.sqlite_ports.SqliteNames`), or in Redis
(:mod:`server.presence.redis_names`)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from server.presence.values import name_key, secret_hash


class Names(ABC):
    """Name claims: ``presence.names``."""

    @abstractmethod
    async def claim(self, name: str, secret: str) -> bool:
        """Claim ``name`` for whoever knows ``secret`` (stored hashed).

        True if the name was free (now claimed) or ``secret`` matches the claim;
        False if someone else holds it.
        """

    @abstractmethod
    async def claimed(self, name: str) -> bool: ...


class MemoryNames(Names):
    def __init__(self) -> None:
        #: name key -> secret hash
        self.claims: dict[str, str] = {}

    async def claim(self, name: str, secret: str) -> bool:
        held = self.claims.setdefault(name_key(name), secret_hash(secret))
        return held == secret_hash(secret)

    async def claimed(self, name: str) -> bool:
        return name_key(name) in self.claims
