"""Who may read a finished game's record: anyone, unless the room was private.

A private room's records carry ``private``, the hash of the room's invite code, and
who played: ``readers``, the name keys of the players who had logged in with their
name's token, and ``guest_sessions``, the sessions of guest players. ``get_record``
serves them to those players (a name's owner whenever it logs in with the token
again; a guest in the session it played in: a guest's name is nobody's, anyone may
be a guest of that name later, or claim it), to whoever gives the invite code, and
answers everyone else ``unknown_record``, as for an id that does not exist (a record
id is guessable: the room id and the game number).
"""

from __future__ import annotations

import hmac
from typing import Any

from server.names import name_key
from server.presence.base import secret_hash


def private_record_fields(
    private: bool, invite: str | None, seats: list[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """What a record keeps to decide later who may read it (``seats``: each player's
    session and player wire data)."""
    if not private:
        return {}
    return {
        "private": True,
        "invite_hash": secret_hash(invite) if invite else None,
        "readers": sorted({name_key(p["name"]) for _, p in seats if not p.get("guest")}),
        "guest_sessions": sorted({sid for sid, p in seats if p.get("guest")}),
    }


def may_read(
    record: dict[str, Any],
    name: str | None,
    invite: str | None,
    guest: bool = False,
    session: str | None = None,
) -> bool:
    """Whether a reader logged in as ``name`` (``guest``: without a token) in
    ``session``, or holding ``invite``, may read ``record``."""
    if not record.get("private"):
        return True
    readers = record.get("readers")
    if readers is None:  # (a record kept before readers were: its players' names)
        players = (record.get("data") or {}).get("players") or record.get("players") or []
        readers = [name_key(str(p)) for p in players]
    if name is not None and not guest and name_key(name) in readers:
        return True
    if session is not None and session in (record.get("guest_sessions") or ()):
        return True
    held = record.get("invite_hash")
    return bool(invite and held and hmac.compare_digest(secret_hash(invite), held))
