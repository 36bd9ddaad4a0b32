"""The sessions port of presence: a session's data, the resume token that resumes it
(kept only as a hash) and its time to live. In memory (:class:`MemorySessions`),
written through to SQLite (:class:`server.presence.sqlite_ports.SqliteSessions`),
or in Redis (:mod:`server.presence.redis_sessions`)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from server.presence.values import JSON, copy_json, secret_hash


class Sessions(ABC):
    """Sessions: ``presence.sessions``."""

    @abstractmethod
    async def create(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        """Store a session; ``token`` (kept only as a hash) resumes it until it expires."""

    @abstractmethod
    async def get(self, session_id: str) -> JSON | None: ...

    @abstractmethod
    async def update(self, session_id: str, data: JSON) -> bool:
        """Replace a live session's data (TTL unchanged); False if it has expired."""

    async def update_many(self, data: dict[str, JSON]) -> None:
        """:meth:`update` of several sessions (id -> data), in one round trip where the
        store allows it; sessions that have expired are left alone."""
        for session_id, d in data.items():
            await self.update(session_id, d)

    @abstractmethod
    async def touch(self, session_id: str, ttl: float) -> bool:
        """Extend a live session to expire ``ttl`` seconds from now; False if gone."""

    @abstractmethod
    async def resume(self, token: str) -> tuple[str, JSON] | None:
        """The ``(session_id, data)`` a resume token belongs to, if still live."""

    @abstractmethod
    async def end(self, session_id: str) -> None: ...


class MemorySessions(Sessions):
    """Sessions in this process; TTLs checked lazily against :func:`time.monotonic`."""

    def __init__(self) -> None:
        #: session id -> (data, monotonic expiry)
        self.live: dict[str, tuple[JSON, float]] = {}
        #: token hash -> session id, and back
        self.tokens: dict[str, str] = {}
        self.token_of: dict[str, str] = {}

    def _live(self, session_id: str) -> JSON | None:
        entry = self.live.get(session_id)
        if entry is None:
            return None
        if entry[1] <= time.monotonic():
            self.live.pop(session_id, None)
            return None
        return entry[0]

    async def create(self, session_id: str, token: str, data: JSON, ttl: float) -> None:
        self.live[session_id] = (copy_json(data), time.monotonic() + ttl)
        self.tokens[secret_hash(token)] = session_id
        self.token_of[session_id] = secret_hash(token)

    async def get(self, session_id: str) -> JSON | None:
        return copy_json(self._live(session_id))

    async def update(self, session_id: str, data: JSON) -> bool:
        if self._live(session_id) is None:
            return False
        self.live[session_id] = (copy_json(data), self.live[session_id][1])
        return True

    async def touch(self, session_id: str, ttl: float) -> bool:
        data = self._live(session_id)
        if data is None:
            return False
        self.live[session_id] = (data, time.monotonic() + ttl)
        return True

    async def resume(self, token: str) -> tuple[str, JSON] | None:
        session_id = self.tokens.get(secret_hash(token))
        if session_id is None:
            return None
        data = self._live(session_id)
        if data is None:
            self.tokens.pop(secret_hash(token), None)
            return None
        return session_id, copy_json(data)

    async def end(self, session_id: str) -> None:
        self.live.pop(session_id, None)
        token_hash = self.token_of.pop(session_id, None)
        if token_hash is not None:
            self.tokens.pop(token_hash, None)
