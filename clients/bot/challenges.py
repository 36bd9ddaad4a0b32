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

from clients.bot.retries import AGAIN_AFTER_S, AGAIN_AT_MOST_S, ANSWER_WAIT_S, OFFLINE_AT_MOST_S
from clients.client import ArenaError, ConnectionLost
from clients.engines.process import EngineProcessError
from engine.match import TimeControl
from protocol import messages as m
from protocol.client import DeclineReason
from protocol.timecontrol import engine_time_control, protocol_time_control

if TYPE_CHECKING:
    from clients.bot.runner import BotRunner


def _backoff(times: int, most: float) -> float:
    """Seconds to wait after ``times`` refusals in a row: doubled from
    :data:`AGAIN_AFTER_S` each time, up to ``most``."""
    return min(most, AGAIN_AFTER_S * 2 ** min(max(0, times - 1), 16))


#: ``pending`` while the challenge is on its way: its answer may come after the game
_SENDING = ""
#: decline reasons after which the same challenge would be declined again (PROTOCOL.md,
#: Challenges): not asked again; ``game`` is about the one spec, the others about all
_FOR_GOOD = {
    "game": "does not play {spec}",
    "time_control": "does not play {clock}",
    "rated": "plays no rated games",
    "casual": "plays no casual games",
    "no_challenges": "takes no challenges",
}
#: seconds an accepted-if-possible challenge waits for a game of this bot to end
ROOM_WAIT_S = 5.0
#: seconds an accept waits for its game to be seated (``matched``), counted as a game
SEATED_WAIT_S = 5.0
#: the reason a challenge is declined after the server refused to accept it
_REFUSED = {"too_many_rooms": "later", "forbidden": "rated"}


class ChallengesDeclined(Exception):
    """Every challenge the bot was to send is declined for good (the run's end)."""


class ChallengeDesk:
    """The runner's challenges: at most one sent and waiting, any number answered."""

    def __init__(self, runner: BotRunner) -> None:
        self.runner = runner
        #: the challenge this bot sent and is waiting on (``--challenge``), or
        #: :data:`_SENDING` until the server's answer to it is read
        self.pending: str | None = None
        self._after = 0.0
        self._declined = 0  # in a row
        self._given = ""  # the game of the challenge sent last, as --challenge gave it
        self._offline = 0  # the challenged player found not online, times in a row
        #: outcomes (``accepted`` or an end's reason, and a decline's) of challenges
        #: heard of while ours was on its way: one of them may be ours
        self._early: dict[str, tuple[str, str | None]] = {}
        #: game specs declined for good (``game``): the others are asked in turn
        self._refused: set[str] = set()
        #: why no challenge is asked any more (every spec declined for good), if so
        self.given_up: str | None = None
        #: challenges accepted whose game is not seated yet: set by its ``matched``
        self._seating: dict[str, asyncio.Event] = {}

    def may_send(self) -> bool | None:
        """True: send one now; None: one is due later (poll); False: none is due."""
        if not self.runner.cfg.challenge or self.pending is not None or self.given_up:
            return False
        return True if time.monotonic() >= self._after else None

    async def send(self) -> None:
        """Challenge the named player to the next game spec (``--challenge NAME GAME...``).

        The challenged bot may accept (``matched``) or decline before this client has
        read the server's answer to the challenge: :meth:`route` sees those while
        ``pending`` is :data:`_SENDING`, and the challenge is not waited on again."""
        r = self.runner
        name = r.cfg.challenge[0]
        self._given = r.next_spec_text(self._specs_left())
        game, variant, rules = r.cfg.spec(self._given)
        self.pending = _SENDING
        self._early.clear()
        try:
            sent = await r.client.challenge(
                name,
                game,
                rules=rules,
                variant=variant,
                time_control=protocol_time_control(r.cfg.time_control()),
                rated=r.cfg.rated,
            )
        except ArenaError as exc:
            self.pending = None
            if exc.code != "unknown_player":
                raise
            self._offline += 1
            if self._offline == 1:  # (said once: it may come online later)
                r.say(f"{name} is not online: challenging again until they are")
            self._after = time.monotonic() + _backoff(self._offline, OFFLINE_AT_MOST_S)
            return
        except BaseException:
            self.pending = None
            raise
        self._offline = 0
        if self.pending != _SENDING:
            return  # accepted already (a server that does not name it): the game has begun
        self.pending = sent.challenge
        asyncio.get_running_loop().call_later(ANSWER_WAIT_S, self._overdue, sent.challenge)
        if (early := self._early.pop(sent.challenge, None)) is not None:
            self._settle(sent.challenge, *early)  # (its answer came first)

    def _overdue(self, challenge: str) -> None:
        if self.pending == challenge:
            name = self.runner.cfg.challenge[0]
            self.runner.say(f"challenge to {name}: no answer in {ANSWER_WAIT_S:g} s, asking again")
            self.runner.spawn(self.take_back(challenge))

    def _shown(self) -> str:
        """The game of the challenge sent last, in full (``--variant``/``--rules`` in)."""
        return "/".join(part for part in self.runner.cfg.spec(self._given) if part)

    def _specs_left(self) -> list[str]:
        """``--challenge``'s games (default collapsi) but those declined for good."""
        return [t for t in self.runner.cfg.challenge[1:] or ["collapsi"] if t not in self._refused]

    def _settle(self, challenge: str, outcome: str, why: str | None = None) -> None:
        """``challenge`` was ``accepted`` (its game begins) or ended without a game
        (``why``: a decline's reason); if it may be ours, still on its way, the outcome
        waits for the server's answer."""
        if challenge == self.pending:
            if outcome == "accepted":
                self.pending, self._declined = None, 0
            else:
                self._ended(outcome, why)
        elif self.pending == _SENDING and len(self._early) < 100:
            self._early[challenge] = (outcome, why)

    def _ended(self, reason: str, why: str | None) -> None:
        """Our challenge ended without a game: ask again later, later after each decline
        in a row (one that ended otherwise, ``gone``, is asked again soon); not at all
        after a decline for good (``why``)."""
        name = self.runner.cfg.challenge[0]
        self.pending = None
        if reason == "declined" and why in _FOR_GOOD:
            self._declined_for_good(name, why)
            return
        self._declined = self._declined + 1 if reason == "declined" else 0
        wait = _backoff(self._declined, AGAIN_AT_MOST_S)
        times = f", {self._declined} times in a row" if self._declined > 1 else ""
        said = ""
        if why == "later":
            said = " (busy: no room for another game now)"
        elif self._declined:  # (no reason given: a client or server before reasons)
            said = f" (it may not play {self._shown()}, or take no challenges)"
        self.runner.say(
            f"challenge to {name} {reason}{times}{said}: challenging again in {wait:g} s"
        )
        self._after = time.monotonic() + wait
        self.runner.changed.set()

    def _declined_for_good(self, name: str, why: str) -> None:
        """Leave out what ``name`` will always decline: the spec (``game``), or every
        challenge; with nothing left to ask, :attr:`given_up` says why."""
        r = self.runner
        label = r.cfg.time_control().label()
        clock = "untimed games" if label == "none" else f"with the clock {label}"
        said = f"{name} {_FOR_GOOD[why].format(spec=self._shown(), clock=clock)}"
        self._refused.add(self._given)
        left = self._specs_left()
        if why == "game" and left:
            r.say(f"challenge to {name} declined: {said}; challenging it to {', '.join(left)}")
        else:
            self.given_up = f"{said}: not challenging {name} again"
            waiting = "; waiting for challenges" if r.cfg.accept_challenges else ""
            r.say(f"challenge to {name} declined: {self.given_up}{waiting}")
        r.changed.set()

    def forget(self) -> None:
        """The session is gone (logged in again): so is the challenge it sent."""
        self.pending = None
        self._early.clear()

    async def after_resume(self) -> None:
        """The session was resumed: the end of the challenge it sent may have come
        during the drop, and is not sent again (the server tells connected sessions
        only). Take the challenge back and ask again: a game it began meanwhile comes
        with the resume's rooms, and a decline is heard again."""
        if self.pending:  # (none, or on its way: its request failed with the drop)
            await self.take_back(self.pending)

    async def take_back(self, challenge: str) -> None:
        """Cancel ``challenge`` (still ours) so that it is asked again; kept if the
        cancel went unanswered (a drop: the resume takes it back again)."""
        try:
            await self.runner.client.cancel_challenge(challenge)
        except ArenaError as exc:  # (ConnectionLost included)
            if exc.code != "unknown_challenge":  # (unknown: it ended meanwhile)
                return
        except TimeoutError:
            return
        if self.pending == challenge:
            self.pending = None
            self.runner.changed.set()

    def route(self, msg: Any) -> bool:
        """Take ``msg`` if it is about challenges (True); ``matched`` ends the pending one."""
        if msg.type == "matched":  # (the runner starts the game)
            named = getattr(msg, "challenge", None)
            if named is None:  # (a server that does not name it: ours, as only ours can be)
                self.pending, self._declined = None, 0
                for seated in self._seating.values():  # (or one we accepted)
                    seated.set()
            else:
                self._settle(named, "accepted")
                if (seated := self._seating.get(named)) is not None:
                    seated.set()
            return False
        if msg.type == "challenged":
            self.runner.spawn(self.answer(msg))
            return True
        if msg.type == "challenge_ended":
            self._settle(msg.challenge, msg.reason, getattr(msg, "decline_reason", None))
            if (seated := self._seating.get(msg.challenge)) is not None:
                seated.set()  # (accepted as its challenger left: no game)
            return True
        return False

    async def answer(self, ch: m.Challenged) -> None:
        """``--accept-challenges``: accept while there is room for a game this bot plays
        (a game just ending makes room in a moment); decline otherwise, saying why."""
        r = self.runner
        why = self._never(ch)
        deadline = time.monotonic() + ROOM_WAIT_S
        while why is None and not r.room_for_more() and time.monotonic() < deadline:
            r.changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(deadline - time.monotonic()):
                    await r.changed.wait()
        rated = ", rated" if ch.rated else ""
        what = (
            f"challenge from {ch.player.name}: {ch.game}/{ch.variant}/{ch.rules}, "
            f"clock {engine_time_control(ch.time_control).label()}{rated}"
        )
        try:
            why = why or self._never(ch)
            if why is None and r.room_for_more():
                r.accepting += 1  # (counted as a game until it is seated: none begins
                try:  # meanwhile, from quick match or another challenge)
                    await r.spares.warm()  # the game starts at once: its engine must be up
                    await r.leave_queue()
                    if r.room_for_more(held=1):  # (not paired meanwhile)
                        why = await self._accept(ch, what)
                        if why is None:
                            return
                finally:
                    r.accepting -= 1
                    r.changed.set()
            why = why or "later"
            r.say(f"{what}, declined ({why})")
            await r.client.decline_challenge(ch.challenge, why)
        except (ArenaError, ConnectionLost, TimeoutError, EngineProcessError) as exc:
            r.say(f"challenge from {ch.player.name}: {exc}")

    async def _accept(self, ch: m.Challenged, what: str) -> DeclineReason | None:
        """Accept ``ch`` and wait until its game is seated (its ``matched``, at most
        :data:`SEATED_WAIT_S`); the reason to decline it instead if the server refused
        the accept (a limit of games, a guest's rated game)."""
        seated = self._seating[ch.challenge] = asyncio.Event()
        try:
            try:
                await self.runner.client.accept_challenge(ch.challenge)
            except ArenaError as exc:
                if isinstance(exc, ConnectionLost) or exc.code == "unknown_challenge":
                    raise
                self.runner.say(f"{what}: the server refused the accept: {exc}")
                return _REFUSED.get(exc.code, "generic")
            self.runner.say(f"{what}, accepted")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SEATED_WAIT_S):
                    await seated.wait()
            return None
        finally:
            self._seating.pop(ch.challenge, None)

    def _never(self, ch: m.Challenged) -> DeclineReason | None:
        """Why this bot declines ``ch`` whenever it is asked (PROTOCOL.md, "Decline
        reasons"), or None: it plays it when it has room."""
        from engine.ai import LEVELS

        r = self.runner
        cfg = r.cfg
        if not cfg.accept_challenges or 0 < cfg.games <= r.started:  # (no more games)
            return "no_challenges"
        if ch.rated and cfg.token is None:  # (a guest: the server seats no rated game)
            return "rated"
        if cfg.accept_games and not any(_is_spec(t, ch) for t in cfg.accept_games):
            return "game"
        clock = engine_time_control(ch.time_control)
        if cfg.accept_clocks and clock not in map(TimeControl.parse, cfg.accept_clocks):
            return "time_control"
        if cfg.accept_modes and ("rated" if ch.rated else "casual") not in cfg.accept_modes:
            return "rated" if ch.rated else "casual"
        if cfg.level is not None and cfg.level not in LEVELS.get(ch.game, ()):
            return "game"
        if (ch.game, ch.variant, ch.rules) in r.cannot_play:  # (its engine refused it)
            return "game"
        return None


def _is_spec(text: str, ch: m.Challenged) -> bool:
    """Whether ``ch`` is of the game spec ``text`` (``GAME[/VARIANT[/RULES]]``; what it
    leaves out, any; variants combined with ``+`` in any order)."""
    game, variant, rules = [*text.split("/"), "", ""][:3]
    return (
        game == ch.game
        and (not variant or set(variant.split("+")) == set(ch.variant.split("+")))
        and (not rules or rules == ch.rules)
    )
