"""Player tokens: how strong a token must be, and how a client makes one.

A player token is the only proof of a claimed name, so a guessable one is a stolen
name. The server refuses (``bad_request``) a login whose token is shorter than
:data:`TOKEN_MIN_CHARS` or has fewer than :data:`TOKEN_MIN_DISTINCT` different
characters (protocol/PROTOCOL.md, "Player tokens"). :func:`new_token` makes a token
well past both: 32 characters from 64, about 192 bits.
"""

from __future__ import annotations

import secrets

TOKEN_MIN_CHARS = 16
"""Fewest characters in a player token."""
TOKEN_MIN_DISTINCT = 8
"""Fewest different characters in a player token."""


def weak_token(token: str) -> str | None:
    """Why ``token`` is too weak to claim a name, or None if it is strong enough."""
    if len(token) < TOKEN_MIN_CHARS:
        return f"a player token needs at least {TOKEN_MIN_CHARS} characters"
    if len(set(token)) < TOKEN_MIN_DISTINCT:
        return f"a player token needs at least {TOKEN_MIN_DISTINCT} different characters"
    return None


def new_token() -> str:
    """A fresh random player token (URL-safe base64, 32 characters, ~192 bits)."""
    return secrets.token_urlsafe(24)
