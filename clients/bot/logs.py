"""A bot's per-game logs: lines kept until a game has its room, and the files they go to.

A file log's lines are written a batch at a time, at most :data:`FLUSH_S` after the
first of them, at the game's end, and when the run ends (:func:`flush_all`): an open,
a write and a close for each line cost more than the rest of the runner's share of a
move (a move logs about six), and they came before the move was sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

Log = Callable[[str], None]

#: at most this long between a line logged and its write to the file (seconds)
FLUSH_S = 0.25

#: file logs with lines not yet written (the run writes them as it ends)
_PENDING: set[FileLog] = set()


class GameLog:
    """A game's log, chosen once the brain knows its room: lines before that (a warm
    engine's handshake) are kept and written first, a file log's with the time each was
    logged (not the game's start)."""

    def __init__(self) -> None:
        self.target: Log | None = None
        self._held: list[tuple[float, str]] = []

    def __call__(self, text: str) -> None:
        if self.target is None:
            self._held.append((time.time(), text))
        else:
            self.target(text)

    def attach(self, target: Log) -> None:
        self.target = target
        for at, text in self._held:
            if isinstance(target, FileLog):
                target.add(at, text)
            else:
                target(text)
        self._held.clear()


class FileLog:
    """``path``, one line per call, each stamped with the time it was logged; a file that
    cannot be written is reported once to ``on_error`` (its lines are dropped)."""

    def __init__(self, path: Path, on_error: Log) -> None:
        self.path = path
        self.on_error: Log | None = on_error
        self._lines: list[tuple[float, str]] = []
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, text: str) -> None:
        self.add(time.time(), text)

    def add(self, at: float, text: str) -> None:
        """A line logged at ``at`` (``time.time()``)."""
        self._lines.append((at, text))
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # (no loop: nothing to wait on, written now)
                self.flush()
                return
            self._timer = loop.call_later(FLUSH_S, self.flush)
            _PENDING.add(self)

    def flush(self) -> None:
        """Write the lines kept so far."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        _PENDING.discard(self)
        lines, self._lines = self._lines, []
        if not lines:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                f.write("".join(f"{_stamp(at)} {text}\n" for at, text in lines))
        except OSError as exc:
            report, self.on_error = self.on_error, None
            if report is not None:
                report(f"cannot write the game log {self.path}: {exc}")


def flush_all() -> None:
    """Write every file log's kept lines (the run is ending)."""
    for log in list(_PENDING):
        log.flush()


def _stamp(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"
