"""What both terminal clients (``arena play`` and ``arena tui``) show of a game, as plain
data and text: seat labels with names, clocks counted down locally from the server's
last clock, and the Collapsi board with its cell numbers (the move notation).

Everything here reads the server's ``view`` objects (PROTOCOL.md, Rooms and games), so a
client needs no engine to show a position.
"""

from __future__ import annotations

import time
from typing import Any

#: how each game's seat labels are shown in colour (Rich colour names)
SEAT_COLOURS = {
    "red": "red",
    "blue": "dodger_blue1",
    "green": "green3",
    "yellow": "yellow",
    "first": "magenta",
    "second": "cyan",
}
#: Collecto's ball colours (view["colours"]) as Rich colours and letters
BALL_COLOURS = {
    "blue": "dodger_blue1",
    "yellow": "yellow",
    "red": "red",
    "orange": "dark_orange",
    "purple": "medium_purple",
    "green": "green3",
}
BALL_LETTERS = {
    "blue": "B",
    "yellow": "Y",
    "red": "R",
    "orange": "O",
    "purple": "P",
    "green": "G",
}


def seat_name(seats: list[Any], seat: int | None) -> str:
    """``ann (red)`` for a seat of a ``room_state``/``game_started`` seat list."""
    if seat is None or not 0 <= seat < len(seats):
        return "nobody"
    info = seats[seat]
    name = info.player.name if info.player is not None else "(empty)"
    return f"{name} ({info.label})"


def format_ms(ms: float) -> str:
    """A clock as ``m:ss`` (``m:ss.t`` under a minute), never negative."""
    ms = max(0.0, ms)
    if ms < 60_000:
        return f"{int(ms // 60_000)}:{ms % 60_000 / 1000:04.1f}"
    s = int(ms // 1000)
    return f"{s // 60}:{s % 60:02d}"


class LocalClock:
    """The clocks as the server last sent them, run down locally for the running seat.

    Every server message with a clock corrects it (PROTOCOL.md: a client shows
    ``remaining_ms[running]`` minus the time since it received the message).
    """

    def __init__(self) -> None:
        self.remaining: list[int] = []
        self.running: int | None = None
        self.at = 0.0

    def update(self, clock: Any | None, now: float | None = None) -> None:
        if clock is None:
            return
        self.remaining = list(clock.remaining_ms)
        self.running = clock.running
        self.at = time.monotonic() if now is None else now

    def stop(self) -> None:
        """The game ended: the clocks stand where they are."""
        self.remaining = self.now()
        self.running = None

    def now(self, now: float | None = None) -> list[int]:
        """Each seat's time left at ``now`` (monotonic seconds)."""
        out = list(self.remaining)
        if self.running is not None and self.running < len(out):
            t = time.monotonic() if now is None else now
            out[self.running] = max(0, int(out[self.running] - (t - self.at) * 1000))
        return out

    def text(self, seats: list[Any]) -> str:
        """``clock: ann (red) 4:58 * | bob (blue) 5:00`` (``*`` marks the running clock)."""
        if not self.remaining:
            return ""
        parts = []
        for i, ms in enumerate(self.now()):
            mark = " *" if i == self.running else ""
            parts.append(f"{seat_name(seats, i)} {format_ms(ms)}{mark}")
        return "clock: " + " | ".join(parts)


def collapsi_cells(view: dict[str, Any]) -> list[tuple[int, str, int | None, bool]]:
    """Each cell of a Collapsi view: (number, card, seat of the pawn on it, collapsed)."""
    pawns = {cell: seat for seat, cell in enumerate(view.get("pawns") or []) if cell is not None}
    collapsed = set(view.get("collapsed") or [])
    out = []
    for i, card in enumerate(view.get("cards") or []):
        out.append((i, card or ".", pawns.get(i), i in collapsed or card in (None, "", ".")))
    return out


def collapsi_text(view: dict[str, Any]) -> str:
    """The Collapsi board as text, one cell ``NN:CP`` each: its number (what a move
    names), its card (``##`` collapsed) and the initial of the pawn's colour on it."""
    width = int(view.get("width") or 4)
    seats = view.get("seats") or []
    rows = []
    line: list[str] = []
    for i, card, pawn, gone in collapsi_cells(view):
        mark = seats[pawn][0].upper() if pawn is not None and pawn < len(seats) else " "
        line.append(f"{i:>2}:" + ("##" if gone and pawn is None else f"{card}{mark}"))
        if len(line) == width:
            rows.append("  ".join(line))
            line = []
    if line:
        rows.append("  ".join(line))
    return "\n".join(rows)


def clock_label(tc: Any) -> str:
    """A wire time control as a lobby shows it: ``3+2``, ``30 s/move``, ``-``."""
    if tc.kind == "fischer":
        return f"{tc.base_ms / 60000:g}+{tc.increment_ms / 1000:g}"
    if tc.kind == "per_move":
        return f"{tc.ms / 1000:g} s/move"
    return "-"
