"""Engine programs as tournament participants, through the bots issue's driver.

An :class:`EngineParticipant` is one running program (clients/engines/process.py,
speaking clients/ENGINE_PROTOCOL.md) that plays one game at a time. The runner's
clocks decide; the program is told them in ``go``. Its failures become
:class:`~clients.tournament.participants.Fault`: a crash, a hang (no ``bestmove``
before its time is up), a garbled line or an illegal move loses that game, and the
program is started again (handshake, options) before its next one; an engine that
refuses a game (``error`` after ``newgame``) loses it too. ``bestmove resign`` resigns.
"""

from __future__ import annotations

from clients.engines import protocol as p
from clients.engines.process import (
    EngineCrashed,
    EngineGarbled,
    EngineIllegalMove,
    EngineNotFound,
    EngineProcess,
    EngineProcessError,
    EngineRefused,
    EngineTimeout,
)
from clients.tournament.config import ConfigError, ParticipantSpec
from clients.tournament.participants import Fault, Participant, Resigned, Turn
from engine.base import Game

_KINDS: dict[type[EngineProcessError], str] = {
    EngineCrashed: "crash",
    EngineTimeout: "timeout",
    EngineGarbled: "garbled",
    EngineIllegalMove: "illegal",
    EngineRefused: "refused",
    EngineNotFound: "crash",
}


def _fault(exc: EngineProcessError) -> Fault:
    return Fault(_KINDS.get(type(exc), "crash"), str(exc))


class EngineParticipant(Participant):
    """One engine process; see the module docstring."""

    def __init__(self, spec: ParticipantSpec, game_name: str) -> None:
        super().__init__(spec, game_name)
        assert spec.cmd is not None
        self.process = EngineProcess(list(spec.cmd), cwd=spec.cwd)
        self._broken = False
        #: how long the last answer took, from go to bestmove (the driver's measure)
        self.last_elapsed_ms = 0.0

    async def start(self) -> None:
        """Start the program and set its options; a program that cannot start is a
        configuration error, reported before any game."""
        try:
            await self.process.start()
            for name, value in self.spec.options.items():
                await self.process.set_option(name, value)
        except EngineProcessError as exc:
            await self.process.quit()
            raise ConfigError(f"participant {self.name}: {exc}") from None

    async def new_game(self, game: Game, seat: int) -> None:
        cmd = p.NewGame(
            game=game.name,
            rules=game.rules,
            variant=game.variant,
            players=game.num_players,
            seat=seat,
            options=game.options(),
        )
        try:
            if self._broken or not self.process.running:
                await self.restart()
            await self.process.new_game(cmd)
        except EngineProcessError as exc:
            self._broken = True
            raise _fault(exc) from None

    async def choose(self, game: Game, turn: Turn) -> str:
        go = p.Go()
        if turn.clocks is not None:
            tc = turn.time_control
            if tc.kind == "fixed":
                go = p.Go(movetime=tc.per_move_ms)
            else:
                go = p.Go(time=tuple(turn.clocks), inc=tc.increment_ms)
        try:
            result = await self.process.play(game, go, timeout=turn.wait_ms / 1000)
        except EngineProcessError as exc:
            self._broken = True
            raise _fault(exc) from None
        self.last_elapsed_ms = result.elapsed_ms
        if result.move == "resign":
            raise Resigned()
        return result.move

    async def game_over(self, winner: int | None, reason: str) -> None:
        if self.process.running and not self._broken:
            try:
                await self.process.game_over(winner, reason)
            except EngineProcessError:
                self._broken = True

    async def restart(self) -> None:
        self._broken = False
        try:
            await self.process.restart()  # the driver sets the options again
        except EngineProcessError:
            self._broken = True  # tried again before its next game

    async def stop(self) -> None:
        await self.process.quit()
