"""Seating a quick-match pair: one turn of the new room's actor, so nothing interleaves.

Seated step by step (join, join, seat, seat), a player who left in between (logout,
a dropped connection, another room's limit) made a later step fail: tracebacks and
an ``error`` to both players. Here every step runs in one actor turn, after a check
that both are still there; a pair that cannot be seated is put back (the player
still connected re-queued, the empty room closed) and logged at info, without a
traceback: a player leaving is expected (issue 13).

Both players are members before the first ``player_joined``, so each gets both
(PROTOCOL.md, Quick match: both ``player_joined``, ``matched``, both ``seat_taken``...).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from protocol import messages as m
from server import node_messages as nm
from server.presence import PresenceError

if TYPE_CHECKING:
    from server.host import Host as Arena
    from server.room import Room
    from server.sessions import Session


class PairGone(Exception):
    """A matched player left before the room was set up (an expected race)."""


def still_here(arena: Arena, s: Session) -> bool:
    """Connected, and (a session of this node) not logged out meanwhile."""
    local = s.node in ("", arena.node)
    return s.conn is not None and (not local or arena.sessions.get(s.id) is s)


async def seat_pair(
    arena: Arena, room: Room, order: list[Session], challenge: str | None = None
) -> None:
    """Inside ``room``'s actor: join, announce and seat both players, send each the state
    (``challenge``: the accepted challenge the pair comes from, named in ``matched``)."""
    if not all(still_here(arena, s) for s in order):
        raise PairGone("a matched player left")
    for s in order[1:]:  # a member already, so it hears the first player_joined too
        room.members.setdefault(s.id, "spectator")
    for s in order:
        await room.join(s.id, s.player, "player", None, False)
    for seat, s in enumerate(order):
        s.conn.send(m.Matched(room=room.id, seat=seat, challenge=challenge))  # type: ignore[union-attr]
    for seat, s in enumerate(order):
        await room.take_seat(s.id, s.player, seat)  # type: ignore[arg-type]
    for s in order:  # the snapshot after the seats: it has `you` (and the game started)
        await room.send_state(s.id, None)


async def unseat(room: Room) -> None:
    """Inside the actor: the pair was not seated; the room closes (its members, if
    any joined before the failure, get ``room_closed``)."""
    await room.close("empty")


def queued(s: Session, queue: str, data: dict[str, Any]) -> bool:
    """Whether ``s`` still waits in ``queue`` with the entry of ``data`` (not cancelled,
    not queued again since)."""
    return s.queue == queue and s.queued_at == data.get("since")


async def left_queue(arena: Arena, s: Session, since: float | None) -> None:
    """``s`` (this node's) was seated: from its queue entry of ``since``, out of the queue
    if that is still its entry (one queued since stands); from a challenge (``since``
    None, before the seating), out of the queue, its entry too."""
    async with s.queue_lock:
        if since is not None:
            if s.queued_at == since:
                s.queue = None
            return
        if s.queue is not None:
            key, s.queue = s.queue, None
            with contextlib.suppress(PresenceError):
                await arena.presence.queues.cancel(key, s.id)


async def requeue(arena: Arena, s: Session, key: str, rating: float, data: dict[str, Any]) -> None:
    """Put ``s`` (this node's) back in ``key`` with its entry of ``data``, if it is still
    here and waits there with that entry."""
    async with s.queue_lock:
        if still_here(arena, s) and queued(s, key, data):
            with contextlib.suppress(PresenceError):  # (an outage: it waits in vain, as queued)
                await arena.presence.queues.add(key, s.id, rating, data)


async def put_back(
    arena: Arena, entries: list[tuple[dict[str, Any], Session]], key: str | None
) -> None:
    """Re-queue the players of a pair taken off ``key`` that could not be seated, if they
    still wait there with that entry (a player of another node: by its node, which
    knows); none for a challenge's pair (``key`` None: taken off no queue)."""
    if key is None:
        return
    for entry, s in entries:
        if s.node not in ("", arena.node):
            arena.cluster.send(s.node, nm.Requeue(s.id, key, entry["rating"], entry["data"]))
        else:
            await requeue(arena, s, key, entry["rating"], entry["data"])
