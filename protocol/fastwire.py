"""Hot-path server messages built as wire data directly, beside the models they equal.

Why: a room sends a ``move_made`` per move to every member, and lobby entries and
seat lists with most other events; building a pydantic model and dumping it costs
more than the move. Each builder here returns exactly what :func:`protocol.codec.to_wire`
makes of its model (same keys, same order, top-level nulls left out; nested as the
model dumps them), and ``tests/test_protocol_fastwire.py`` checks that for many
generated values. A field added to one of these models must be added here too (the
test then fails until it is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def player_wire(player: Mapping[str, Any]) -> dict[str, Any]:
    """A :class:`protocol.common.Player` nested in a message (its rating null if unknown)."""
    return {
        "name": player["name"],
        "guest": player.get("guest", False),
        "bot": player.get("bot", False),
        "rating": player.get("rating"),
    }


def seat_wire(
    seat: int, label: str, player: Mapping[str, Any] | None, ready: bool, connected: bool
) -> dict[str, Any]:
    """A :class:`protocol.common.SeatInfo` (an empty seat: no player, not ready, connected)."""
    if player is None:
        return {"seat": seat, "label": label, "player": None, "ready": False, "connected": True}
    return {
        "seat": seat,
        "label": label,
        "player": player_wire(player),
        "ready": ready,
        "connected": connected,
    }


def clock_wire(remaining_ms: Sequence[int], running: int | None) -> dict[str, Any]:
    """A :class:`protocol.common.Clock`."""
    return {"remaining_ms": list(remaining_ms), "running": running}


def room_summary_wire(
    *,
    room: str,
    game: str,
    rules: str,
    variant: str,
    seats: list[dict[str, Any]],
    time_control: dict[str, Any],
    rated: bool,
    status: str,
    spectators: int,
    created_at: int | None,
) -> dict[str, Any]:
    """A :class:`protocol.common.RoomSummary` (``seats`` as :func:`seat_wire` makes them,
    ``time_control`` as its model dumps it)."""
    wire: dict[str, Any] = {
        "room": room,
        "game": game,
        "rules": rules,
        "variant": variant,
        "seats": seats,
        "time_control": time_control,
        "rated": rated,
        "status": status,
        "spectators": spectators,
    }
    if created_at is not None:
        wire["created_at"] = created_at
    return wire


def event_wire(type_: str, room: str, seq: int, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A room event of type ``type_`` (any :class:`protocol.server.RoomEventBase`): ``fields``
    must be in the model's order and already wire data; nulls are left out."""
    wire: dict[str, Any] = {"type": type_, "room": room, "seq": seq}
    for key, value in fields.items():
        if value is not None:
            wire[key] = value
    return wire


def move_made_wire(
    room: str,
    seq: int,
    *,
    ply: int,
    seat: int,
    move: str,
    position: str,
    view: dict[str, Any],
    to_move: int | None,
    legal_moves: list[str],
    clocks: Sequence[int] | None,
) -> dict[str, Any]:
    """A :class:`protocol.server.MoveMade` (``clocks``: the remaining times, running for
    ``to_move``; None untimed)."""
    wire: dict[str, Any] = {
        "type": "move_made",
        "room": room,
        "seq": seq,
        "ply": ply,
        "seat": seat,
        "move": move,
        "position": position,
        "view": view,
    }
    return _with_turn(wire, to_move, legal_moves, clocks)


def game_started_wire(
    room: str,
    seq: int,
    *,
    game_number: int,
    seats: list[dict[str, Any]],
    setup: str,
    position: str,
    view: dict[str, Any],
    to_move: int | None,
    legal_moves: list[str],
    clocks: Sequence[int] | None,
) -> dict[str, Any]:
    """A :class:`protocol.server.GameStarted` (``seats`` as :func:`seat_wire` makes them)."""
    wire: dict[str, Any] = {
        "type": "game_started",
        "room": room,
        "seq": seq,
        "game_number": game_number,
        "seats": seats,
        "setup": setup,
        "position": position,
        "view": view,
    }
    return _with_turn(wire, to_move, legal_moves, clocks)


def _with_turn(
    wire: dict[str, Any], to_move: int | None, legal_moves: list[str], clocks: Sequence[int] | None
) -> dict[str, Any]:
    """``wire`` with the fields every position-carrying event ends with, in the models'
    order: ``to_move`` (left out when null), ``legal_moves``, ``clock`` (left out untimed)."""
    if to_move is not None:
        wire["to_move"] = to_move
    wire["legal_moves"] = legal_moves
    if clocks is not None:
        wire["clock"] = {"remaining_ms": list(clocks), "running": to_move}
    return wire


def make_move_wire(room: str, move: str, reply: str | None) -> dict[str, Any]:
    """A :class:`protocol.client.MakeMove` without its ``id`` (a client adds it): a bot
    sends one per move of each of its games."""
    wire = {"type": "move", "room": room, "move": move}
    if reply is not None:
        wire["reply"] = reply
    return wire
