"""Which web pages may open a WebSocket to this server: the ``Origin`` check.

A browser sends ``Origin`` with every WebSocket handshake and lets any page connect
anywhere; without a check, a page on any site could drive the session of a user who
plays from a browser on that machine. Programs (bots, the terminal client) send no
``Origin`` and are always let in. A handshake with an ``Origin`` is accepted when
that origin is on the allow-list (``--allow-origin``, ``$ARENA_ALLOW_ORIGIN``;
``*`` allows every origin) or names this server's own host (its ``Host`` header);
any other, ``null`` included, is answered 403 (SECURITY.md).
"""

from __future__ import annotations

from urllib.parse import urlsplit


def _canonical(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def parse_allow_list(text: str | None) -> tuple[str, ...]:
    """Origins from a comma- or space-separated list (``--allow-origin``)."""
    if not text:
        return ()
    return tuple(_canonical(o) for o in text.replace(",", " ").split() if o)


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a handshake with these ``Origin`` and ``Host`` headers may go on."""
    if origin is None:
        return True  # not a browser
    canon = _canonical(origin)
    if "*" in allowed or canon in (_canonical(a) for a in allowed):
        return True
    if canon == "null" or not host:
        return False
    parts = urlsplit(canon)
    return parts.scheme in ("http", "https") and parts.netloc == host.strip().lower()
