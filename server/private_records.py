"""Who may read a finished game's record: anyone, unless the room was private.

A private room's records carry ``private`` and the hash of the room's invite code;
``get_record`` serves them to the game's players (by name key, as logins match
names) and to whoever gives the invite code, and answers everyone else
``unknown_record``, as for an id that does not exist (a record id is guessable: the
room id and the game number).
"""

from __future__ import annotations

import hmac
from typing import Any

from server.names import name_key
from server.presence.base import secret_hash


def private_record_fields(private: bool, invite: str | None) -> dict[str, Any]:
    """What a record keeps to decide later who may read it."""
    if not private:
        return {}
    return {"private": True, "invite_hash": secret_hash(invite) if invite else None}


def may_read(record: dict[str, Any], name: str | None, invite: str | None) -> bool:
    if not record.get("private"):
        return True
    players = (record.get("data") or {}).get("players") or record.get("players") or []
    if name is not None and name_key(name) in {name_key(str(p)) for p in players}:
        return True
    held = record.get("invite_hash")
    return bool(invite and held and hmac.compare_digest(secret_hash(invite), held))
