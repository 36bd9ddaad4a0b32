"""``arena bot``'s challenges: the one it sends (``--challenge``) and those it answers
(``--accept-challenges``).

A :class:`ChallengeDesk` belongs to one :class:`~clients.bot.runner.BotRunner`: the
runner's feeder asks it to send when the bot has room for a game, and the runner's
dispatcher hands it every ``challenged`` and ``challenge_ended``. A challenge that is
accepted arrives as ``matched``, like a quick-match pairing, and the runner starts the
game from that (PROTOCOL.md, Challenges).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from clients.bot.timing import wire_time_control
from clients.client import ArenaError, ConnectionLost
from clients.engines.process import EngineProcessError
from protocol import messages as m

if TYPE_CHECKING:
    from clients.bot.runner import BotRunner

#: seconds before challenging again after a challenge ended unanswered (not a flood)
AGAIN_AFTER_S = 1.0
#: seconds an accepted-if-possible challenge waits for a game of this bot to end
ROOM_WAIT_S = 5.0


class ChallengeDesk:
    """The runner's challenges: at most one sent and waiting, any number answered."""

    def __init__(self, runner: BotRunner) -> None:
        self.runner = runner
        #: the challenge this bot sent and is waiting on (``--challenge``)
        self.pending: str | None = None
        self._after = 0.0

    def may_send(self) -> bool | None:
        """True: send one now; None: one is due later (poll); False: none is due."""
        if not self.runner.cfg.challenge or self.pending is not None:
            return False
        return True if time.monotonic() >= self._after else None

    async def send(self) -> None:
        """Challenge the named player to the next game spec (``--challenge NAME GAME...``)."""
        r = self.runner
        name, *specs = r.cfg.challenge
        game, variant, rules = r.next_spec(specs or ["collapsi"])
        sent = await r.client.challenge(
            name,
            game,
            rules=rules,
            variant=variant,
            time_control=wire_time_control(r.cfg.time_control()),
            rated=r.cfg.rated,
        )
        self.pending = sent.challenge

    def route(self, msg: Any) -> bool:
        """Take ``msg`` if it is about challenges (True); ``matched`` ends the pending one."""
        if msg.type == "matched":
            self.pending = None
            return False  # the runner starts the game
        if msg.type == "challenged":
            self.runner.spawn(self.answer(msg))
            return True
        if msg.type == "challenge_ended":
            if msg.challenge == self.pending:
                self.runner.say(f"challenge {msg.reason}")
                self.pending = None
                self._after = time.monotonic() + AGAIN_AFTER_S
                self.runner.changed.set()
            return True
        return False

    async def answer(self, ch: m.Challenged) -> None:
        """``--accept-challenges``: accept while there is room for a game this bot plays
        (a game just ending makes room in a moment); decline otherwise."""
        from engine.ai import LEVELS

        r = self.runner
        playable = r.cfg.level is None or r.cfg.level in LEVELS.get(ch.game, ())
        deadline = time.monotonic() + ROOM_WAIT_S
        while playable and not r.room_for_more() and time.monotonic() < deadline:
            r.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(r.changed.wait(), deadline - time.monotonic())
        what = f"challenge from {ch.player.name}: {ch.game}/{ch.variant}"
        try:
            if r.cfg.accept_challenges and playable and r.room_for_more():
                await r.warm()  # the game starts at once: its engine must be up
                r.say(f"{what}, accepted")
                await r.client.accept_challenge(ch.challenge)
            else:
                r.say(f"{what}, declined")
                await r.client.decline_challenge(ch.challenge)
        except (ArenaError, ConnectionLost, TimeoutError, EngineProcessError) as exc:
            r.say(f"challenge from {ch.player.name}: {exc}")
