"""Hot-path server frames decoded without the generic walk and pydantic, beside their models.

Why: a player receives a ``move_made`` for every move of its games (its own move's too,
as the reply), and a ``clock_update`` when a clock starts or stops; ``arena bot`` plays
many games on one connection, and the generic decoder (:func:`protocol.codec.decode_server`:
msgpack, a walk of every value for the limits, then pydantic) cost more than the rest of
its move. :func:`decode_server_fast` checks those two types field by field, exactly as
their models do (strict types, bounds, patterns), walks only the free-form ``view`` for the
limits, and builds the model without validating it again. Anything it does not take as
is (a field out of bounds, an unknown key, a JSON text frame, another type) goes the
generic way on the data already parsed, so errors are the generic decoder's own.
``tests/test_protocol_fastread.py`` checks both ways give equal models, or the same error,
for many generated frames. A field added to one of these models must be added here too
(the test then fails until it is).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from protocol.codec import (
    SERVER_ADAPTER,
    Frame,
    _check_tree,
    _parse_msgpack,
    _validate,
    decode_server,
)
from protocol.common import Clock
from protocol.limits import (
    DEFAULT_LIMITS,
    ID_MAX,
    MAX_MOVES,
    MAX_MS,
    MAX_SEATS,
    MAX_SEQ,
    MOVE_MAX,
    POSITION_MAX,
    DecodeLimits,
)
from protocol.server import SERVER_TYPES, ClockUpdate, MoveMade, ServerMessage

_ID = re.compile(r"[A-Za-z0-9_.:-]+").fullmatch  # protocol.common.Id's pattern


def decode_server_fast(frame: Frame, limits: DecodeLimits = DEFAULT_LIMITS) -> ServerMessage:
    """:func:`protocol.codec.decode_server`, the same result and errors, faster for the
    frames every move brings (msgpack ``move_made`` and ``clock_update``)."""
    if type(frame) is not bytes or limits.max_depth < 3:  # (a clock is at depth 3)
        return decode_server(frame, limits)
    data = _parse_msgpack(frame, limits)
    if type(data) is not dict:
        return decode_server(frame, limits)  # (its error)
    kind = data.get("type")
    fast = _FAST.get(kind) if type(kind) is str else None
    msg = None if fast is None else fast(data, limits)
    return msg if msg is not None else _slow(data, limits)


def _slow(data: dict[str, Any], limits: DecodeLimits) -> ServerMessage:
    """The generic decoder's steps after parsing (the walk, then the model)."""
    _check_tree(data, limits)
    return _validate(data, SERVER_ADAPTER, SERVER_TYPES, None)  # type: ignore[no-any-return]


def _plain(value: dict[str, Any] | list[Any], depth: int, max_depth: int) -> bool:
    """Whether the generic walk (``_check_tree``) passes ``value`` at ``depth``, for data
    msgpack parsed under the same limits: its strings, arrays and maps are within their
    sizes and its integers in range already, so what is left is the depth, string keys,
    finite floats and no binary data. Type sets are made in C: a view is many values."""
    if depth > max_depth:
        return False
    if type(value) is dict:
        if not _STR.issuperset(map(type, value)):
            return False
        items: Any = value.values()
    else:
        items = value
    kinds = set(map(type, items))
    if kinds <= _LEAF:
        return True
    if float in kinds and not all(math.isfinite(x) for x in items if type(x) is float):
        return False
    if not kinds <= _VALUES:
        return False
    return all(_plain(x, depth + 1, max_depth) for x in items if type(x) in _CONTAINERS)


_STR = frozenset({str})
_LEAF = frozenset({str, int, bool, type(None)})
_CONTAINERS = frozenset({dict, list})
_VALUES = _LEAF | _CONTAINERS | {float}


def _built(cls: type[Any], fields: dict[str, Any], given: set[str]) -> Any:
    """The model ``cls`` with ``fields`` (every field, in declaration order) as pydantic's
    validation leaves it: ``given`` are the fields the frame set."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", fields)
    object.__setattr__(obj, "__pydantic_fields_set__", given)
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def _int(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _str(value: Any, high: int) -> bool:
    return type(value) is str and 0 < len(value) <= high


def _envelope(data: dict[str, Any], keys: frozenset[str]) -> bool:
    """Only known keys; ``re`` (if any) a request id; ``room`` an id; ``seq`` in range."""
    if not keys.issuperset(data):
        return False
    rid = data.get("re")
    if rid is not None and not (_int(rid, 0, MAX_SEQ) or _str(rid, ID_MAX)):
        return False
    room = data.get("room")
    return _str(room, ID_MAX) and _ID(room) is not None and _int(data.get("seq"), 0, MAX_SEQ)


def _clock(value: Any) -> Clock | None:
    """A :class:`Clock` if ``value`` is exactly one (no other keys)."""
    if type(value) is not dict or not _CLOCK_KEYS.issuperset(value):
        return None
    remaining = value.get("remaining_ms")
    if type(remaining) is not list or len(remaining) > MAX_SEATS:
        return None
    for ms in remaining:
        if not _int(ms, 0, MAX_MS):
            return None
    running = value.get("running")
    if running is not None and not _int(running, 0, MAX_SEATS - 1):
        return None
    return _built(Clock, {"remaining_ms": remaining, "running": running}, set(value))  # type: ignore[no-any-return]


_CLOCK_KEYS = frozenset(Clock.model_fields)
_MOVE_MADE_KEYS = frozenset(MoveMade.model_fields)
_CLOCK_UPDATE_KEYS = frozenset(ClockUpdate.model_fields)


def _move_made(data: dict[str, Any], limits: DecodeLimits) -> MoveMade | None:
    if not _envelope(data, _MOVE_MADE_KEYS):
        return None
    get = data.get
    ply, seat, move, position = get("ply"), get("seat"), get("move"), get("position")
    view, to_move, legal, clock = get("view"), get("to_move"), get("legal_moves"), get("clock")
    if not (
        _int(ply, 1, MAX_MOVES)
        and _int(seat, 0, MAX_SEATS - 1)
        and _str(move, MOVE_MAX)
        and _str(position, POSITION_MAX)
        and type(view) is dict
        and (to_move is None or _int(to_move, 0, MAX_SEATS - 1))
        and type(legal) is list
        and len(legal) <= MAX_MOVES
    ):
        return None
    if legal and not (_STR.issuperset(map(type, legal)) and min(map(len, legal)) > 0):
        return None
    if legal and max(map(len, legal)) > MOVE_MAX:
        return None
    if clock is not None and (clock := _clock(clock)) is None:
        return None
    if not _plain(view, 2, limits.max_depth):  # (the generic walk will say why)
        return None
    fields = {
        "type": "move_made",
        "re": get("re"),
        "room": data["room"],
        "seq": data["seq"],
        "ply": ply,
        "seat": seat,
        "move": move,
        "position": position,
        "view": view,
        "to_move": to_move,
        "legal_moves": legal,
        "clock": clock,
    }
    return _built(MoveMade, fields, set(data))  # type: ignore[no-any-return]


def _clock_update(data: dict[str, Any], limits: DecodeLimits) -> ClockUpdate | None:
    if not _envelope(data, _CLOCK_UPDATE_KEYS):
        return None
    clock = _clock(data.get("clock"))
    if clock is None:
        return None
    fields = {
        "type": "clock_update",
        "re": data.get("re"),
        "room": data["room"],
        "seq": data["seq"],
        "clock": clock,
    }
    return _built(ClockUpdate, fields, set(data))  # type: ignore[no-any-return]


_FAST: dict[str, Callable[[dict[str, Any], DecodeLimits], ServerMessage | None]] = {
    "move_made": _move_made,
    "clock_update": _clock_update,
}
