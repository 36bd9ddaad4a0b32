"""An engine program's output, read as lines and parsed as they arrive.

:class:`Replies` is the protocol on the program's stdout pipe: each whole line is parsed
and queued at once, so the request waiting for it wakes on the loop's next turn (a
StreamReader would wake a reading task first), and a ``bestmove`` goes to an armed hook
before it is queued (a runner sends the move from there), as does a ``readyok`` (a
runner begins the game's first search from there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from clients.engines import protocol as p

#: ``on_line(direction, text)``: ``">"`` a line sent, ``"<"`` received, ``"!"`` on stderr
LineHook = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class Malformed:
    line: str
    error: str


class Eof:
    pass


EOF = Eof()
Item = p.Reply | Malformed | Eof


class Replies(asyncio.Protocol):
    """The engine's output, parsed as it arrives: each whole line goes to ``queue`` as a
    reply at once, so an answer wakes the request waiting for it directly (a StreamReader
    wakes a reading task first: one more turn of the loop per answer). A line longer
    than ``limit`` makes the output unusable: it is reported, then the end, and nothing
    more is read. The end (EOF) is queued once."""

    def __init__(self, queue: asyncio.Queue[Item], limit: int, on_line: LineHook | None) -> None:
        self.queue = queue
        self.limit = limit
        self.on_line = on_line
        self.transport: asyncio.ReadTransport | None = None
        #: called with the next ``bestmove`` as its line is read, before it is queued
        #: (:meth:`EngineProcess.begin_go`), then disarmed; it must not raise
        self.on_move: Callable[[p.BestMove], None] | None = None
        #: called as the next ``readyok`` is read, before it is queued
        #: (:meth:`EngineProcess.begin_new_game`), then disarmed; an ``error`` line read
        #: first disarms it (the engine refused the game: nothing is sent for it); it
        #: must not raise
        self.on_ready: Callable[[], None] | None = None
        self.answered = True  # a bestmove was read since the last search began
        self._partial = b""
        self._ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._ended:
            return
        buf = self._partial + data if self._partial else data
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            if end - start > self.limit:
                self._too_long()
                return
            self._line(buf[start:end])
            start = end + 1
        self._partial = buf[start:]
        if len(self._partial) > self.limit:
            self._too_long()

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        try:
            reply = p.parse_reply(line)
        except p.LineError as exc:
            reply = Malformed(line, str(exc))
        if type(reply) is p.BestMove:
            self.answered = True
            if (hook := self.on_move) is not None:
                self.on_move = None
                hook(reply)  # (before the line is logged: the move first)
        elif type(reply) is p.ReadyOk and (ready := self.on_ready) is not None:
            self.on_ready = None
            if self.on_line:  # (logged first: the lines the hook writes come after it)
                self.on_line("<", line)
            ready()
            self.queue.put_nowait(reply)
            return
        elif type(reply) is p.EngineErrorLine:
            self.on_ready = None
        if self.on_line:
            self.on_line("<", line)
        if reply is not None:
            self.queue.put_nowait(reply)

    def _too_long(self) -> None:
        self.queue.put_nowait(Malformed("<line too long>", f"over {p.MAX_LINE} bytes"))
        self._end()
        if self.transport is not None:
            self.transport.pause_reading()  # (not read any more, as its stream was)

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._partial = b""
            self.queue.put_nowait(EOF)

    def eof_received(self) -> None:
        if self._partial and not self._ended:  # a last line without its newline
            self._line(self._partial)
        self._end()

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()

    def close(self) -> None:
        """Stop reading (the process is gone or being replaced): nothing more is queued."""
        self._ended = True
        if self.transport is not None:
            self.transport.close()
