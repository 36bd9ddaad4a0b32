"""Who chooses a bot's moves: an engine program, a built-in AI level, or a Python bot.

A :class:`Brain` plays one game at a time (a runner makes one per game, so each game
has its own engine process). Each misbehaviour of an engine program is reported
through ``strike(reason)``, which raises :class:`StruckOut` once the runner's limit
is reached (ENGINE_PROTOCOL.md, "Misbehaving engines"): the policy is here, the
counting in the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

from clients.bot.timing import MoveTime
from clients.engines import protocol as p
from clients.engines.process import (
    EngineCrashed,
    EngineGarbled,
    EngineIllegalMove,
    EngineOptionUnknown,
    EngineProcess,
    EngineProcessError,
    EngineTimeout,
    Search,
)
from engine.ai import make_player
from engine.base import Game

if TYPE_CHECKING:
    from clients.bot.sdk import Bot

#: ``strike(reason)``: count one strike (may raise :class:`StruckOut`)
Strike = Callable[[str], None]
#: ``log(text)``: a line for this game's log
Log = Callable[[str], None]

RESIGN = "resign"


class StruckOut(Exception):
    """The engine reached the runner's strike limit; the message lists why."""


class Brain(ABC):
    """Chooses moves for one game at a time."""

    label: str = "brain"

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Get ready (start a process); raises :class:`EngineProcessError`."""

    async def new_game(self, game: Game, seat: int) -> None:  # noqa: B027 - optional hook
        """A game starts; raises :class:`EngineRefused` for a game it does not play."""

    def begin_game(self, game: Game, seat: int, on_ready: Callable[[], None]) -> bool:
        """Start getting ready for a game at once, from the callback that brought it (no
        task, no turn of the loop); ``on_ready()`` when ready, so that the first turn can
        :meth:`begin` from there. :meth:`new_game` for the same game then finishes it.
        False: nothing started."""
        return False

    def begin(
        self, game: Game, legal: list[str], mt: MoveTime, on_move: Callable[[str], None]
    ) -> bool:
        """Start thinking at once, from the callback that brought the turn (no task, no
        turn of the loop); :meth:`choose` for the same position then finishes it, and
        ``on_move(move)`` may get a legal answer sooner. False: nothing started."""
        return False

    @abstractmethod
    async def choose(self, game: Game, legal: list[str], mt: MoveTime) -> str | None:
        """A move of ``legal``, ``"resign"``, or ``None``: no answer in the time allowed."""

    async def game_over(self, winner: int | None, reason: str) -> None:  # noqa: B027
        """The game ended (an optional hook)."""

    async def abandon(self) -> None:  # noqa: B027 - optional hook
        """The turn :meth:`begin` started ended without :meth:`choose` (the game ended
        first): stop thinking about it."""

    async def interrupt(self) -> None:  # noqa: B027 - optional hook
        """The game ended while :meth:`choose` waits: answer now (its move is not sent)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what :meth:`start` took."""

    def for_next_game(self, log: Log) -> bool:
        """After a game that ended with a result: get ready to play another with ``log``
        (True), or say it cannot (False: the runner closes it)."""
        return False


class EngineBrain(Brain):
    """An engine program over the engine protocol, with the misbehaving-engine policy."""

    def __init__(
        self,
        command: str,
        options: dict[str, str],
        strike: Strike,
        log: Log,
        untimed_move_s: float,
        stop_grace: float = 1.0,
    ) -> None:
        self.proc = EngineProcess(command, on_line=self._line, stop_grace=stop_grace)
        self.options = options
        self.strike = strike
        self.log = log
        self.untimed_move_s = untimed_move_s
        self.label = command
        self._new: p.NewGame | None = None
        self._new_begun = False  # begin_game() sent self._new: new_game() waits for it
        #: start() has finished (the handshake and the options): until then the callbacks
        #: begin nothing (a game whose engine starts as it begins: the task's way)
        self._up = False
        #: a search :meth:`begin` started: (the history's length then, the search)
        self._early: tuple[int, Search] | None = None
        self._interrupted = False  # the game ended while choose() waits: ask no more

    def _line(self, direction: str, text: str) -> None:
        self.log(f"engine {direction} {text}")

    async def start(self) -> None:
        info = await self.proc.start()
        self.label = f"{info.name} ({self.label})"
        try:
            for name, value in self.options.items():
                await self.proc.set_option(name, value)  # (checked against the declarations)
        except EngineOptionUnknown:
            await self.proc.quit()
            raise
        self._up = True

    async def new_game(self, game: Game, seat: int) -> None:
        cmd = p.new_game_of(game, seat)
        begun, self._new_begun = self._new_begun and cmd == self._new, False
        self._new = cmd
        if begun:
            await self.proc.finish_new_game()
        else:
            await self.proc.new_game(cmd)

    def begin_game(self, game: Game, seat: int, on_ready: Callable[[], None]) -> bool:
        if not self._up:
            return False
        self._new = p.new_game_of(game, seat)
        self._new_begun = self.proc.begin_new_game(self._new, on_ready)
        return self._new_begun

    async def _revive(self) -> None:
        """Start the process again after a crash or a hang, and give it the game."""
        await self.proc.restart()
        self.log(f"engine restarted (pid {self.proc.pid})")
        if self._new is not None and not self._interrupted:  # (a game still going on)
            await self.proc.new_game(self._new)

    def begin(
        self, game: Game, legal: list[str], mt: MoveTime, on_move: Callable[[str], None]
    ) -> bool:
        def answered(best: p.BestMove) -> None:
            if best.move in legal:  # (anything else is choose()'s to judge)
                on_move(best.move)

        if not self._up:
            return False
        search = self.proc.begin_go(p.position_of(game), legal, mt.go, on_move=answered)
        self._early = None if search is None else (len(game.history), search)
        return search is not None

    async def choose(self, game: Game, legal: list[str], mt: MoveTime) -> str | None:
        allowed = mt.hard_ms / 1000 if mt.hard_ms is not None else self.untimed_move_s
        deadline = time.monotonic() + allowed
        wrong = 0
        early, self._early = self._early, None
        self._interrupted = False
        # a search begun for this position is finished, once (one begun for another is
        # drained by the next go)
        search = early[1] if early is not None and early[0] == len(game.history) else None
        while (left := deadline - time.monotonic()) > 0 and not self._interrupted:
            try:
                if search is not None:
                    begun, search = search, None
                    return (await self.proc.finish_go(begun, timeout=left)).move
                if not self.proc.running:
                    await self._revive()
                    if self._interrupted:
                        break
                    left = deadline - time.monotonic()
                answer = await self.proc.go(p.position_of(game), legal, mt.go, timeout=left)
                return answer.move
            except EngineCrashed as exc:
                self.strike(f"crashed: {exc}")
            except EngineTimeout as exc:
                self.strike(f"no move in time: {exc}")
                late = exc.late_move
                ok = late is not None and (late in legal or late == RESIGN)
                if ok and time.monotonic() < deadline:
                    return late
                return None
            except (EngineIllegalMove, EngineGarbled) as exc:
                self.strike(f"bad answer: {exc}")
                wrong += 1
                if wrong >= 2:  # asked once more: still wrong, resign (the policy)
                    return RESIGN
        return None

    async def abandon(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            await self.proc.cancel_go()

    async def interrupt(self) -> None:
        self._interrupted = True  # (not asked again after a crash or a wrong answer)
        if self.proc.searching:  # (choose() takes its bestmove: the engine stays in step)
            with contextlib.suppress(EngineProcessError):
                await self.proc.stop()

    async def game_over(self, winner: int | None, reason: str) -> None:
        if self.proc.running:
            try:
                await self.proc.game_over(winner, reason)
            except EngineProcessError as exc:
                self.log(f"engine gone at game over: {exc}")

    async def close(self) -> None:
        await self.proc.quit()

    def for_next_game(self, log: Log) -> bool:
        """The same process plays the next game (ENGINE_PROTOCOL.md: one game at a time,
        many in turn; ``newgame`` starts each), if it still runs: no start-up."""
        if not self.proc.running:
            return False
        self.log, self._new, self._early, self._new_begun = log, None, None, False
        return True


class LevelBrain(Brain):
    """A built-in AI level (engine.ai.make_player), thinking in a worker thread."""

    def __init__(self, level: str, seed: int) -> None:
        self.level = level
        self.seed = seed
        self.label = f"level {level}"

    async def choose(self, game: Game, legal: list[str], mt: MoveTime) -> str | None:
        player = make_player(game.name, self.level, seed=self.seed, budget_ms=mt.budget_ms)
        work = asyncio.ensure_future(asyncio.to_thread(player.choose, game.copy()))
        if mt.hard_ms is None:
            return await work
        # a level's budget counts its thread's CPU time: on a loaded machine the wall clock
        # runs faster, and the server's clock is a wall clock. At 80% of the time allowed
        # the level's answer is given up for a random legal move (its thread ends alone).
        try:
            async with asyncio.timeout(mt.hard_ms * 0.8 / 1000):
                return await asyncio.shield(work)
        except TimeoutError:
            return make_player(game.name, "random", seed=self.seed).choose(game.copy())


class SdkBrain(Brain):
    """A :class:`clients.bot.sdk.Bot` subclass: ``choose(game)`` in a worker thread."""

    def __init__(self, bot: Bot, strike: Strike) -> None:
        self.bot = bot
        self.strike = strike
        self.label = type(bot).__name__

    async def new_game(self, game: Game, seat: int) -> None:
        self.bot.new_game(game.copy(), seat)

    async def choose(self, game: Game, legal: list[str], mt: MoveTime) -> str | None:
        move = await asyncio.to_thread(self.bot.choose, game.copy())
        if move not in legal and move != RESIGN:
            self.strike(f"bad answer: {type(self.bot).__name__}.choose returned {move!r}")
            return legal[0] if legal else RESIGN
        return move

    async def game_over(self, winner: int | None, reason: str) -> None:
        self.bot.game_over(winner, reason)
