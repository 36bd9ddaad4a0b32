"""The protocol's time controls and the engine's :class:`engine.match.TimeControl`,
converted in one place (the server runs the engine's clocks; clients read ``5+3``)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from engine.match import TimeControl
from protocol.common import Fischer, PerMove, Untimed
from protocol.common import TimeControl as WireTimeControl

_ADAPTER: TypeAdapter[Any] = TypeAdapter(WireTimeControl)


def engine_time_control(tc: Fischer | PerMove | Untimed) -> TimeControl:
    if isinstance(tc, Fischer):
        return TimeControl("fischer", base_ms=tc.base_ms, increment_ms=tc.increment_ms)
    if isinstance(tc, PerMove):
        return TimeControl("fixed", per_move_ms=tc.ms)
    return TimeControl()


def protocol_time_control(tc: TimeControl) -> Fischer | PerMove | Untimed:
    if tc.kind == "fischer":
        return Fischer(base_ms=tc.base_ms, increment_ms=tc.increment_ms)
    if tc.kind == "fixed":
        return PerMove(ms=tc.per_move_ms)
    return Untimed()


def parse_time_control(text: str) -> Fischer | PerMove | Untimed:
    """``none``, ``5+3`` (minutes + seconds, Fischer), ``fixed:10`` (seconds per move)."""
    return protocol_time_control(TimeControl.parse(text))


def time_control_from_wire(data: Any) -> Fischer | PerMove | Untimed:
    return _ADAPTER.validate_python(data)
