"""How long the bot may think about a move, from the clocks the server last sent.

The server's clock decides; the runner only spends less than it. ``margin_ms`` is
kept back for the network and the runner itself. A Fischer budget spends about a
thirtieth of what is left plus most of the increment, never more than half of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from clients.engines import protocol as p
from protocol import messages as m


@dataclass(frozen=True, slots=True)
class MoveTime:
    """The clocks for one move: ``hard_ms`` the latest answer the clock allows (after the
    margin; ``None`` untimed), ``budget_ms`` what a built-in level should spend, and
    ``go`` the engine protocol's ``go`` line."""

    hard_ms: float | None
    budget_ms: int | None
    go: p.Go


def move_time(
    clock: m.Clock | None,
    time_control: object,
    seat: int,
    received: float,
    margin_ms: int,
    now: float | None = None,
) -> MoveTime:
    """The :class:`MoveTime` for ``seat`` from ``clock`` as received at ``received``
    (``time.monotonic()``); time spent since is taken off the running seat's clock."""
    spent = ((time.monotonic() if now is None else now) - received) * 1000
    if clock is None or isinstance(time_control, m.Untimed):
        return MoveTime(None, None, p.Go())
    remaining = list(clock.remaining_ms)
    if clock.running is not None and clock.running < len(remaining):
        remaining[clock.running] = max(0, int(remaining[clock.running] - spent))
    mine = remaining[seat] if seat < len(remaining) else 0
    hard = max(1.0, mine - margin_ms)
    if isinstance(time_control, m.PerMove):  # a level spends half: a thread may lag
        return MoveTime(hard, max(1, int(hard / 2)), p.Go(movetime=int(hard)))
    inc = time_control.increment_ms if isinstance(time_control, m.Fischer) else 0
    budget = max(1, int(min(hard / 2, mine / 30 + inc * 0.8)))
    return MoveTime(hard, budget, p.Go(time=tuple(remaining), inc=inc))
