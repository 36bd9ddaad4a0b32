"""``arena bot``'s brains started ahead of their games (each an engine process, usually).

Why: starting a process is the runner's costliest step (the fork holds the interpreter;
the new process takes a core for tens of ms), and during games it delays every other
game's moves (bench/README.md, "Bot runner"); an engine started before its game costs
that game no clock time either. So the first warm-up, before any game, starts one brain
for every game that may be played at once; later ones start a few ahead, and a finished
game's brain is kept for a game still to come.

:class:`Spares` belongs to one :class:`~clients.bot.runner.BotRunner`, whose failures
(an engine not found, strikes) and ``changed`` event it shares.
"""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING

from clients.bot.brains import Brain, Log, StruckOut
from clients.bot.logs import GameLog
from clients.engines.process import EngineNotFound, EngineProcessError
from protocol import messages as m

if TYPE_CHECKING:
    from clients.bot.game_task import GameTask
    from clients.bot.runner import BotRunner

#: brains started ahead of their games at most, once the first warm-up is done
WARM_MAX = 8


def settle_heap() -> None:
    """Collect once after start-up and hide what survives from the collector: the
    modules, the protocol's models and the connection live as long as the run, and a
    full collection scanning them all was the runner's slowest pause inside a move.
    The young generation is collected every 2,000 net allocations rather than 700, so
    that a move's own short-lived containers (frames, models, engine lines) never set it
    off, yet few enough that one collection of what the games keep takes under 1 ms
    (10,000 took 1.5-2.8 ms, inside a move: bench/README.md, session 16)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(2_000, 10, 10)


class Spares:
    """Started brains waiting for games, and those starting."""

    def __init__(self, runner: BotRunner) -> None:
        self.runner = runner
        self.ready: list[tuple[Brain, GameLog]] = []  # (a brain, the log it writes to)
        self.starting = 0
        self._up = asyncio.Event()  # a start ended (up or failed), or a brain was kept
        self._warmed = False  # the first warm() starts one per game at once

    async def warm(self) -> None:
        """Have a started brain ready for the next game: start as many at once as games
        may still begin (at most :data:`WARM_MAX`), and wait until one is up. The first
        time, before any game: one for every game that may be played at once, and wait
        until all are up."""
        r = self.runner
        first = not self._warmed
        room = r.cfg.concurrency - len(r.tasks)
        if not first:
            room = min(WARM_MAX, room)
        if r.cfg.games:
            room = min(room, r.cfg.games - r.started)
        for _ in range(room - len(self.ready) - self.starting):
            self._start_one()
        self._warmed = True
        while (not self.ready or (first and self.starting)) and r.fatal is None:
            if not self.ready and not self.starting:  # (a start failed: a strike)
                self._start_one()
            self._up.clear()
            await self._up.wait()
        if first:
            settle_heap()  # (the engines' transports and streams live as long as they do)

    def take(self, log: Log) -> Brain | None:
        """A started brain, its lines now going to ``log``; None if none is ready."""
        if not self.ready:
            return None
        brain, sink = self.ready.pop()
        sink.attach(log)
        return brain

    def keep(self, task: GameTask, result: m.GameResult | None) -> bool:
        """A finished game's brain (its engine process) kept for a game still to come
        that has none yet: a start-up during the other games saved. Only after a game
        that ended with a result, and while the engine still runs."""
        r = self.runner
        if result is None or r.fatal is not None:
            return False
        if r.cfg.games and r.started + len(self.ready) + self.starting >= r.cfg.games:
            return False  # (every game to come has its engine)
        log = GameLog()
        if not task.brain.for_next_game(log):
            return False
        self.ready.append((task.brain, log))
        self._up.set()
        return True

    def _start_one(self) -> None:
        self.starting += 1
        self.runner.spawn(self._start())

    async def _start(self) -> None:
        r = self.runner
        log = GameLog()
        brain = r.make_brain(r.strike, log)
        try:
            await brain.start()
            self.ready.append((brain, log))
        except EngineNotFound as exc:
            r.fatal = exc
        except EngineProcessError as exc:
            try:
                r.strike(f"failed to start: {exc}")
            except StruckOut as out:
                r.fatal = out
        finally:
            self.starting -= 1
            self._up.set()
            r.changed.set()
