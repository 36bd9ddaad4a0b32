"""The append shapes the presence tests were written in, on the one append
(:meth:`server.presence.rooms.Rooms.append`): the store has no other, so the tests
exercise the real thing. ``expected_seq=None`` appends at the log's next seq, as a
writer that does not number its events would: it reads the last seq and tries,
again at the next seq a conflict names (another writer got there first)."""

from __future__ import annotations

from typing import Any

from server.presence.base import JSON, Presence, SeqConflict

#: tries of an unnumbered append before it gives up (concurrent writers in a test)
TRIES = 1000


async def append_packed(
    p: Presence,
    room_id: str,
    event: JSON,
    packed: bytes,
    expected_seq: int | None = None,
    owner: str | None = None,
    lobby: JSON | None = None,
) -> int:
    """One event (with its packed bytes, or ``b""``) at ``expected_seq`` or the next."""
    if expected_seq is not None:
        return await p.rooms.append(room_id, [(event, packed)], expected_seq, owner, lobby=lobby)
    seq = await p.rooms.last_seq(room_id) + 1
    for _ in range(TRIES):
        try:
            return await p.rooms.append(room_id, [(event, packed)], seq, owner, lobby=lobby)
        except SeqConflict as exc:
            seq = exc.next_seq
    raise AssertionError(f"no append to {room_id} in {TRIES} tries")


async def append_event(
    p: Presence, room_id: str, event: JSON, expected_seq: int | None = None, owner: Any = None
) -> int:
    """One event, packed by the store."""
    return await append_packed(p, room_id, event, b"", expected_seq, owner)


async def append_packed_saving_room(
    p: Presence,
    room_id: str,
    event: JSON,
    packed: bytes,
    expected_seq: int,
    meta: JSON,
    owner: str | None = None,
    lobby: JSON | None = None,
) -> int:
    """One event with the room's settings and members saved."""
    return await p.rooms.append(room_id, [(event, packed)], expected_seq, owner, meta, lobby)
