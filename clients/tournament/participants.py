"""Participants: whatever answers "your move" in a tournament game.

The runner talks to every player through :class:`Participant`, so built-in AI
levels and engine programs (clients/ENGINE_PROTOCOL.md) are seated alike. A
participant that fails (crashes, hangs, answers garbage or an illegal move)
raises :class:`Fault`; the runner then forfeits that game for it and calls
:meth:`Participant.restart` before its next game.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass

from clients.tournament.config import ParticipantSpec
from engine.ai import Player, make_player
from engine.base import Game
from engine.match import TimeControl

FAULT_KINDS = ("crash", "timeout", "garbled", "illegal", "refused")


class Fault(Exception):
    """A participant failed this game: ``kind`` is one of :data:`FAULT_KINDS`."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Resigned(Exception):
    """The participant resigned the game (not a fault: nothing to restart)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """What a participant is told when asked for a move."""

    seat: int
    clocks: list[int] | None  # remaining ms per seat, None without a clock
    time_control: TimeControl
    #: the longest the runner waits for the answer (ms), clock or no clock
    wait_ms: int


class Participant(ABC):
    """One seat-taker; one instance plays one game at a time."""

    def __init__(self, spec: ParticipantSpec, game_name: str) -> None:
        self.spec = spec
        self.game_name = game_name

    @property
    def name(self) -> str:
        return self.spec.name

    async def start(self) -> None:
        """Get ready (start the program); called once before the first game."""
        return None

    async def new_game(self, game: Game, seat: int) -> None:
        """A game begins in which this participant holds ``seat``."""
        return None

    @abstractmethod
    async def choose(self, game: Game, turn: Turn) -> str:
        """The move for the side to move (``game`` must not be changed); raises :class:`Fault`."""

    async def game_over(self, winner: int | None, reason: str) -> None:
        """The game ended (``winner`` a seat or None); nothing is expected back."""
        return None

    async def restart(self) -> None:
        """Recover after a :class:`Fault` (a program is killed and started again)."""
        return None

    async def stop(self) -> None:
        """Release everything (end the program)."""
        return None


class BuiltinParticipant(Participant):
    """An engine.ai level, computed in this process (``offload``: in a thread, so the
    event loop keeps measuring other games' clocks meanwhile)."""

    def __init__(self, spec: ParticipantSpec, game_name: str, offload: bool = False) -> None:
        super().__init__(spec, game_name)
        self.offload = offload
        self._fixed = make_player(  # raises SetupError for an unknown level
            game_name,
            spec.level or "",
            seed=self.seed,
            budget_ms=spec.budget_ms,
            iterations=spec.iterations,
        )

    @property
    def seed(self) -> int:
        return self.spec.seed if self.spec.seed is not None else 0

    def fixed_player(self, tc: TimeControl) -> Player | None:
        """The player for every move under ``tc``, or None when the clock sets its budget
        (ask :meth:`player_for` then, move by move)."""
        if tc.kind == "none" or self.spec.budget_ms is not None or self.spec.iterations:
            return self._fixed
        return None

    def player_for(self, turn: Turn) -> Player:
        """The fixed player, or with a clock and no budget of its own, one that
        spends a share of the remaining time (a 30th of it plus most of the increment)."""
        tc = turn.time_control
        if turn.clocks is None or self.spec.budget_ms is not None or self.spec.iterations:
            return self._fixed
        left = turn.clocks[turn.seat]
        share = left if tc.kind == "fixed" else left // 30 + tc.increment_ms * 3 // 4
        return make_player(
            self.game_name, self.spec.level or "", seed=self.seed, budget_ms=max(1, share)
        )

    async def choose(self, game: Game, turn: Turn) -> str:
        player = self.player_for(turn)
        if self.offload:
            return await asyncio.to_thread(player.choose, game.copy())
        return player.choose(game)


def builtin_only(specs: list[ParticipantSpec] | tuple[ParticipantSpec, ...]) -> bool:
    return all(s.builtin for s in specs)
