"""Opening a tournament pairing's room: as a quick match's (server.quick_seating), one
turn of the new room's actor joins and seats both players, but their ``matched``
names the tournament and the round."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import TypeAdapter

from protocol import messages as m
from protocol.errors import ProtocolError
from server.host import Host
from server.quick_seating import PairGone, still_here, unseat
from server.sessions import Session

_TIME_CONTROL: TypeAdapter[Any] = TypeAdapter(m.TimeControl)


async def open_pairing(
    arena: Host, settings: dict[str, Any], order: list[Session], tid: str, rnd: int
) -> str | None:
    """A room for ``order`` (seat order), its game started; its id, or None when a
    player left before it could be set up (the room is closed again)."""
    tc = _TIME_CONTROL.validate_python(settings["time_control"])
    room = await arena.registry.create_room(
        order[0],
        settings["game"],
        settings["rules"],
        settings["variant"],
        {},
        2,
        tc,
        settings["rated"],
        False,
        True,
    )
    for s in order:  # a logout from now on leaves this room
        s.rooms.add(room.id)
    try:
        await room.ask(_seat, arena, room, order, tid, rnd)
    except (PairGone, ProtocolError) as exc:  # a player left meanwhile: expected
        arena.log.info("tournament_pairing_abandoned", room=room.id, reason=str(exc))
        for s in order:
            s.rooms.discard(room.id)
        with contextlib.suppress(ProtocolError):
            await room.ask(unseat, room)
        return None
    for s in order:
        await arena.session_service.save(s)
    return room.id


async def _seat(arena: Host, room: Any, order: list[Session], tid: str, rnd: int) -> None:
    """Inside the room's actor (see server.quick_seating.seat_pair)."""
    if not all(still_here(arena, s) for s in order):
        raise PairGone("a paired player left")
    for s in order[1:]:
        room.members.setdefault(s.id, "spectator")
    for s in order:
        await room.join(s.id, s.player, "player", None, False)
    for seat, s in enumerate(order):
        s.conn.send(m.Matched(room=room.id, seat=seat, tournament=tid, round=rnd))  # type: ignore[union-attr]
    for seat, s in enumerate(order):
        await room.take_seat(s.id, s.player, seat)  # type: ignore[arg-type]
    for s in order:
        await room.send_state(s.id, None)
