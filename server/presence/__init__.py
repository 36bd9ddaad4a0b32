"""Presence: the shared state of the arena behind one async interface.

:func:`open_presence` picks the implementation from a URL: ``memory://`` (one node,
nothing kept), ``sqlite:DATA_DIR`` (one node, everything kept on disk: what
``arena serve`` uses by default) or ``redis://...`` (many nodes, :attr:`Presence.shared`).
"""

from __future__ import annotations

from server.presence.base import LeaseLost, Presence, PresenceError, SeqConflict, Subscription


def open_presence(url: str | None = None, prefix: str = "arena:") -> Presence:
    """A presence store for ``url`` (None or ``memory://``: in-process)."""
    if url is None or url.startswith("memory:"):
        from server.presence.memory import MemoryPresence

        return MemoryPresence(prefix=prefix)
    if url.startswith("sqlite:"):
        from server.presence.sqlite import SqlitePresence

        return SqlitePresence(url.removeprefix("sqlite:"), prefix=prefix)
    if url.startswith(("redis://", "rediss://", "unix://", "redis+sentinel://")):
        try:
            from server.presence.redis import RedisPresence
        except ImportError as exc:
            raise PresenceError("this build has no Redis presence") from exc
        try:
            return RedisPresence(url, prefix=prefix)
        except ValueError as exc:  # a URL that does not parse
            raise PresenceError(str(exc)) from exc
    raise PresenceError(f"unknown presence URL {url!r}")


__all__ = [
    "LeaseLost",
    "Presence",
    "PresenceError",
    "SeqConflict",
    "Subscription",
    "open_presence",
]
