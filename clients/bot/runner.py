"""``arena bot``'s engine room: one connection, many games, reconnects, strikes.

One task reads every message of the connection (:meth:`BotRunner._dispatch`) and
routes room messages to that room's :class:`~clients.bot.game_task.GameTask`, so
several games share the connection while each has its own brain (its own engine
process). When the connection drops the same task resumes the session
(:meth:`clients.client.Client.reconnect`); the resume's snapshots and catch-ups flow
to the games as if nothing happened. Quick-match entries do not survive a drop, so
the queue is joined again afterwards. Where games come from is in
:mod:`clients.bot.seeking` and :mod:`clients.bot.challenges`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TextIO

from websockets.exceptions import WebSocketException

from clients.bot import seeking
from clients.bot.brains import Brain, StruckOut
from clients.bot.challenges import ChallengeDesk, ChallengesDeclined
from clients.bot.config import BotConfig
from clients.bot.game_task import GameTask
from clients.bot.logs import FileLog, flush_all
from clients.bot.spares import Spares, settle_heap
from clients.client import ArenaError, Client, ConnectionLost, UnknownSessionError
from clients.engines.process import EngineNotFound, EngineProcessError
from engine.base import EngineError, new_game
from protocol import messages as m

#: ``make_brain(strike, log)``: a fresh brain for one game
BrainFactory = Callable[[Callable[[str], None], Callable[[str], None]], Brain]
#: refusals of what the bot asks for that no retry can cure: the run stops (status 1)
_FATAL = frozenset(
    {
        "unknown_game",
        "bad_setup",
        "bad_request",
        "forbidden",
        "not_authenticated",
        "unknown_tournament",
    }
)
#: messages kept for a room the runner has not met yet (quick match sends a few first)
_EARLY_MAX = 64
#: seconds a stopped run waits for the games it resigned to end (a round trip, usually)
_ENDED_WAIT_S = 2.0


def _resigned_text(tasks: list[GameTask]) -> str:
    """``N game(s) resigned``, and those the server aborted instead (resigned before every
    player had moved: PROTOCOL.md), apart."""
    aborted = sum(1 for t in tasks if t.result is not None and t.result.reason == "aborted")
    text = f"{len(tasks) - aborted} game(s) resigned"
    return text + (f", {aborted} aborted (before every player had moved)" if aborted else "")


def _begun_unheard(msg: Any) -> bool:
    """A room's snapshot, after a resume, of a game the bot is seated in and has no task
    for: it began during the drop (a challenge accepted, a tournament's pairing), and its
    ``matched`` went to no connection (the server tells connected sessions only)."""
    return (
        msg.type == "room_state"
        and msg.re is None
        and msg.status == "playing"
        and msg.you is not None
    )


def warm_games(specs: list[tuple[str, str | None, str | None]]) -> None:
    """Build a game of each spec the config names, before any game starts: the engine
    builds a board's move tables on the first game of its size (8 ms for the 4x4 board
    here), inside that game's first move otherwise (bench/README.md, "Bot runner").
    Games it does not name (challenges accepted, tournaments) build theirs as they come."""
    for game, variant, rules in specs:
        with contextlib.suppress(EngineError):
            new_game(game, rules=rules, variant=variant)


class BotRunner:
    """Connects one bot and keeps it playing as :class:`BotConfig` says."""

    def __init__(self, config: BotConfig, make_brain: BrainFactory, out: TextIO) -> None:
        self.cfg = config
        self.make_brain = make_brain
        self.out = out
        self.client = Client(config.url, keep_events=False, patient=True)
        self.tasks: dict[str, GameTask] = {}
        self.strikes: list[str] = []
        self.fatal: BaseException | None = None
        self.started = 0
        self.finished = 0
        self.early: dict[str, list[Any]] = {}
        self.changed = asyncio.Event()  # a game started or ended, a drop, a failure
        self._online = asyncio.Event()
        self._drops = 0
        self._players: set[asyncio.Task[None]] = set()
        self.spares = Spares(self)  # brains started before their games
        #: --tournament: entered on this connection (its drop count); the event is over
        self._entered = -1
        self.tournament_over = False
        self.challenges = ChallengeDesk(self)
        self.accepting = 0  # challenges being accepted: games about to begin
        #: the quick-match queue joined for (drops, games started) then, if it was
        self._queued: tuple[int, int] | None = None
        #: (game, variant, rules) the engine refused to play (an error after newgame):
        #: challenges to them are declined (``game``), not accepted to be resigned again
        self.cannot_play: set[tuple[str, str, str]] = set()
        self._capped = False  # said that the server's limit is below --concurrency

    # -- output ------------------------------------------------------------------------
    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def game_log(self, room: str) -> Callable[[str], None]:
        """A per-game log (``--log-dir``: ``DIR/ROOM.log``, one timestamped line each)."""
        if self.cfg.log_dir is None:
            return lambda text: None
        return FileLog(Path(self.cfg.log_dir) / f"{room}.log", self.say)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task of this run (cancelled when the run ends)."""
        task = asyncio.create_task(work)
        self._players.add(task)
        task.add_done_callback(self._players.discard)

    def strike(self, reason: str) -> None:
        """Count a strike (ENGINE_PROTOCOL.md, "Misbehaving engines"); raise at the limit."""
        self.strikes.append(reason)
        self.say(f"strike {len(self.strikes)}/{self.cfg.max_strikes}: {reason}")
        if len(self.strikes) >= self.cfg.max_strikes:
            who = self.cfg.engine or self.cfg.level or "bot"
            raise StruckOut(
                f'engine "{who}" stopped after {len(self.strikes)} strikes: '
                + "; ".join(self.strikes)
            )

    # -- the run -----------------------------------------------------------------------
    async def run(self) -> int:
        """Play until the configured number of games is done (0: forever); exit status."""
        self.client.listener = self._route  # (before connecting: nothing is missed)
        # the engines start first: one that cannot run as asked (not found, an option it
        # does not take) stops the run before the bot is seen online
        await self.spares.warm()
        if self.fatal is not None:
            await self._stop_games()
            self.say(f"stopped: {self.fatal}")
            return 1
        try:
            await self._connect()
        except BaseException:  # (refused, unreachable, or a SIGTERM during the login: the
            with contextlib.suppress(Exception):  # name is free at once; no engine left)
                await self.client.close()
            await self._stop_games()
            raise
        warm_games(self.cfg.specs())
        settle_heap()
        dispatcher = asyncio.create_task(self._dispatch())
        stopped = False  # by Ctrl-C or SIGTERM (the run cancelled)
        try:
            await self._feed_games()
        except asyncio.CancelledError:
            stopped = True
            raise
        finally:
            dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await dispatcher
            resigned = await self._resign_games()
            await self._until_ended(resigned)  # (their result lines before the stop's)
            if stopped:  # (before what a second Ctrl-C or SIGTERM may cut short)
                self.say(f"bot {self.cfg.name}: stopped as asked; {_resigned_text(resigned)}")
            # the name is free again at once; before the engines' slower goodbyes, which
            # a second Ctrl-C or SIGTERM may cut short
            with contextlib.suppress(ArenaError, ConnectionLost, TimeoutError):
                await self.client.logout()
            flush_all()  # (the games' logs, before a second signal can cut what follows)
            await self._stop_games()
            with contextlib.suppress(Exception):
                await self.client.close()
            flush_all()
        if self.fatal is not None:
            self.say(f"stopped: {self.fatal}")
            return 1
        return 0

    async def _connect(self) -> None:
        await self.client.connect()
        await self.client.login(self.cfg.name, self.cfg.token, bot=True)
        self._online.set()
        taken = ""
        if self.tasks:  # (an earlier run's session, dropped, taken over: its games go on)
            taken = f"; taking up {len(self.tasks)} game(s) its last run left running"
        self.say(f"bot {self.cfg.name}: logged in at {self.cfg.url}{taken}")
        if self.cfg.accept_challenges and not self.cfg.modes():
            self.say("waiting for challenges")

    def _done(self) -> bool:
        over = self.tournament_over and not self.tasks
        return over or self.fatal is not None or (0 < self.cfg.games <= self.finished)

    def room_for_more(self, held: int = 0) -> bool:
        """Room for another game: under ``--concurrency`` and ``--games``, counting the
        challenges being accepted but ``held`` of them (the caller's own)."""
        coming = self.accepting - held
        limit_ok = self.cfg.games == 0 or self.started + coming < self.cfg.games
        return limit_ok and len(self.tasks) + coming < self.cfg.concurrency

    async def leave_queue(self) -> None:
        """Out of the quick-match queue, as a challenge is accepted (a pairing as well
        would be one game too many); the feeder queues again when there is room."""
        if self.cfg.quick_match and self._queued is not None:
            self._queued = None
            with contextlib.suppress(ArenaError, ConnectionLost, TimeoutError):
                await self.client.cancel_quick_match()

    def next_spec(self, specs: list[str]) -> tuple[str, str | None, str | None]:
        """The game specs in turn: the n-th game started plays the n-th (cyclically)."""
        return self.cfg.spec(self.next_spec_text(specs))

    def next_spec_text(self, specs: list[str]) -> str:
        """The spec of :meth:`next_spec`, as given."""
        return specs[self.started % len(specs)]

    async def _feed_games(self) -> None:
        """Keep as many games going as allowed: queue for quick match, open rooms, join."""
        while not self._done():
            if self.challenges.given_up and not (self.tasks or self.cfg.accept_challenges):
                self.fatal = ChallengesDeclined(self.challenges.given_up)  # nothing to play
                return
            self.changed.clear()
            poll = False
            if self.room_for_more() and self._online.is_set():
                try:
                    await self.spares.warm()
                    if self.fatal is not None:
                        return
                    if self.cfg.tournament:
                        if self._entered != self._drops:  # again after each reconnect
                            await self._enter_tournament(self.cfg.tournament)
                            self._entered = self._drops
                    elif self.cfg.quick_match:
                        key = (self._drops, self.started)  # before: a match may come first
                        if self._queued != key:
                            # (set first: a challenge accepted meanwhile takes it out)
                            self._queued = key
                            try:
                                await seeking.queue(self)
                            except BaseException:
                                self._queued = None
                                raise
                    elif self.cfg.open_room:
                        await seeking.open_room(self)
                        continue
                    elif self.cfg.join:
                        if await seeking.join_one(self):
                            continue
                        poll = True
                    elif (due := self.challenges.may_send()) is not False:
                        if due:
                            await self.challenges.send()
                        poll = self.challenges.may_send() is None  # (one due later)
                except ConnectionLost:
                    await self._after_loss()
                    continue
                except ArenaError as exc:
                    if exc.code in _FATAL:  # asking again cannot help
                        self.fatal = exc
                        return
                    if exc.code == "too_many_rooms" and self.tasks:
                        self._at_cap(exc)  # a game ending wakes the feeder: no polling
                    else:
                        self.say(f"the server refused: {exc}")
                        poll = True
                except EngineNotFound as exc:
                    self.fatal = exc
                    return
                except EngineProcessError as exc:
                    try:
                        self.strike(f"failed to start: {exc}")
                    except StruckOut as out:
                        self.fatal = out
                        return
                    poll = True
            if poll:  # (asyncio.timeout: Python 3.11's wait_for can swallow a cancel)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.3):
                        await self.changed.wait()
            else:
                await self.changed.wait()

    async def _after_loss(self) -> None:
        """A request failed as the connection went: wait until the dispatcher has seen
        the loss and resumed. (It did not yield before: a request in flight as a server
        stopped failed, the next failed at once on the closed socket, and so on, without
        a turn of the loop: the dispatcher never ran, nor SIGTERM's handler.)"""
        closed = self.client.closed
        with contextlib.suppress(TimeoutError):  # (the reader sets it a moment later, if
            async with asyncio.timeout(1.0):  # the send saw the loss first)
                await closed.wait()
        await asyncio.sleep(0)  # (the dispatcher's turn: it clears _online)
        while not (self._online.is_set() or self._done()):  # (resumed, or given up: fatal)
            self.changed.clear()
            await self.changed.wait()

    def _at_cap(self, exc: ArenaError) -> None:
        """The server's limit of games at once is below ``--concurrency``: said once."""
        if not self._capped:
            self._capped = True
            self.say(f"{exc}: {len(self.tasks)} games at once is the server's limit here")

    async def _enter_tournament(self, tid: str) -> None:
        """Enter (or re-enter, after a reconnect) and follow the standings: pairings come
        as ``matched``; the run ends when the tournament is over."""
        try:
            await self.client.join_tournament(tid)
        except ArenaError as exc:  # over while we were away (a reconnect): not a failure
            if exc.code != "forbidden" or (await self.client.standings(tid)).status != "finished":
                raise
        table = await self.client.subscribe_tournament(tid)
        self.say(f"tournament {tid}: entered ({table.status}, round {table.round})")
        self._standings(table)

    def _standings(self, table: m.Standings) -> None:
        if table.status == "finished" and not self.tournament_over:
            self.tournament_over = True
            mine = next((r for r in table.rows if r.name == self.cfg.name), None)
            place = "" if mine is None else f": rank {mine.rank}, {mine.points:g} points"
            self.say(f"tournament {table.tournament}: over{place}")
            self.changed.set()

    # -- games -------------------------------------------------------------------------
    def start_game(self, room: str, state: m.RoomState | None = None) -> None:
        """A game task for ``room`` (fed ``state`` first, then what came before it)."""
        if room in self.tasks:
            return
        log = self.game_log(room)
        spare = self.spares.take(log)
        # (none: a challenge accepted before the feeder had warmed one)
        brain = spare if spare is not None else self.make_brain(self.strike, log)
        task = GameTask(
            lambda: self.client, room, brain, log, self.cfg.margin_ms, self._online, self.say
        )
        task.brain_ready = spare is not None
        self.tasks[room] = task
        self.started += 1
        if state is not None:
            task.feed(state)
        for msg in self.early.pop(room, []):
            task.feed(msg)
        self.spawn(self._play(task))
        self.changed.set()

    async def _play(self, task: GameTask) -> None:
        result = None
        try:
            if not task.brain_ready:
                await task.brain.start()
            result = await task.run()
        except StruckOut as exc:
            self.fatal = exc
        except EngineNotFound as exc:  # (cannot run as asked: an unknown option...)
            self.fatal = exc
        except EngineProcessError as exc:  # beyond the policy's cases (at newgame...)
            task.log(f"the engine failed: {exc}")
            try:
                self.strike(f"failed: {exc}")
            except StruckOut as out:
                self.fatal = out
            await task.send_move("resign")
        finally:
            if not self.spares.keep(task, result):
                with contextlib.suppress(EngineProcessError):
                    await task.brain.close()
            with contextlib.suppress(ArenaError, ConnectionLost, TimeoutError):
                await self.client.leave(task.room)
            if task.declined and (g := task.game) is not None:
                self.cannot_play.add((g.name, g.variant, g.rules))
            if isinstance(task.log, FileLog):
                task.log.flush()
            self.tasks.pop(task.room, None)
            self.finished += 1
            self.changed.set()
        self.say(self._summary(task, result))

    def _summary(self, task: GameTask, result: m.GameResult | None) -> str:
        vs = ", ".join(task.opponents) or "?"
        if result is None:
            return f"game {task.room}: ended without a result (vs {vs})"
        if result.reason == "aborted":
            outcome = "no result"  # (ended before every player had moved: PROTOCOL.md)
        elif result.winner is None:
            outcome = "draw"
        else:
            outcome = "win" if result.winner == task.seat else "loss"
        moves = 0 if task.game is None else len(task.game.history)
        g = task.game
        name = "?" if g is None else f"{g.name}/{g.variant}/{g.rules}"
        declined = f"; {task.declined}" if task.declined else ""  # (the engine's words)
        return (
            f"game {task.room}: {outcome} ({result.reason}) {name} seat {task.seat} "
            f"vs {vs}, {moves} moves{declined}"
        )

    async def _resign_games(self) -> list[GameTask]:
        """Resign what is still going (the run ended: strikes, a fatal error, Ctrl-C);
        the games that were."""
        resigned = []
        for room, task in list(self.tasks.items()):
            if task.game is not None and not task.game.is_over():
                with contextlib.suppress(Exception):
                    await self.client.resign(room)
                    self.say(f"game {room}: resigning (the run ended)")
                    resigned.append(task)
        return resigned

    async def _until_ended(self, tasks: list[GameTask]) -> None:
        """Wait (at most :data:`_ENDED_WAIT_S`) until ``tasks`` have ended, their result
        lines said: the server answers a resignation with the game's end at once."""
        # (a cancel here is a second Ctrl-C or SIGTERM: the stop goes on without the wait)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            async with asyncio.timeout(_ENDED_WAIT_S):
                while any(t.room in self.tasks for t in tasks):
                    self.changed.clear()
                    await self.changed.wait()

    async def _stop_games(self) -> None:
        """Stop the game tasks and close every engine."""
        for player in list(self._players):
            player.cancel()
        for player in list(self._players):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await player
        brains = [t.brain for t in self.tasks.values()]
        brains += [b for b, _ in self.spares.ready]
        for brain in brains:
            with contextlib.suppress(Exception):
                await brain.close()

    # -- the connection ----------------------------------------------------------------
    async def _dispatch(self) -> None:
        """Route every message as it arrives (the client calls :meth:`_route`); resume the
        session when the connection drops."""
        try:
            while True:
                await self.client.closed.wait()  # (a fresh event after each reconnect)
                self._online.clear()
                self._drops += 1
                self.changed.set()
                await self._reconnect()
                self._online.set()
                self.changed.set()
        except Exception as exc:  # (a login again refused...: the run ends, not hangs)
            if self.fatal is None:
                self.fatal = exc
            self.changed.set()
            raise

    def _route(self, msg: Any) -> None:
        if msg.type == "standings" and msg.tournament == self.cfg.tournament:
            self._standings(msg)
            return
        if self.challenges.route(msg):
            return
        if msg.type == "matched":
            self.start_game(msg.room)
            return
        if msg.type == "error" and msg.re is None:
            self.say(f"server: {msg.code}: {msg.message}")
            self.changed.set()
            return
        room = getattr(msg, "room", None)
        if room is None:
            return
        task = self.tasks.get(room)
        if task is not None:
            task.feed(msg)
        elif _begun_unheard(msg):
            self.start_game(room, msg)
        elif getattr(msg, "re", None) is None:
            early = self.early.setdefault(room, [])
            if len(early) < _EARLY_MAX and len(self.early) < 1000:
                early.append(msg)

    async def _reconnect(self) -> None:
        """Resume the session (or, if it is gone, log in again: its games are lost,
        unless the login with the name's token took the dropped session over)."""
        deadline = time.monotonic() + self.cfg.reconnect_s
        pause = 0.1
        while True:
            session = self.client.session
            try:
                await self.client.reconnect()
                self.say("reconnected: session resumed")
                self.spawn(self.challenges.after_resume())
                return
            except UnknownSessionError:
                await self.client.login(self.cfg.name, self.cfg.token, bot=True)
                if self.client.session == session:  # (the token's login took the dropped
                    self.say("reconnected: session taken over")  # session over: a resume)
                    self.spawn(self.challenges.after_resume())
                    return
                self.say("reconnected: the session was gone, logged in again")
                self.challenges.forget()
                for task in self.tasks.values():
                    task.feed(SimpleNamespace(type="room_closed", room=task.room))
                return
            except (OSError, ConnectionLost, TimeoutError, ArenaError, WebSocketException) as exc:
                # (WebSocketException: a handshake cut short by a server going down or
                # coming up, e.g. InvalidMessage; it ended the dispatcher, and the bot hung)
                if time.monotonic() > deadline:
                    self.fatal = ConnectionError(f"cannot reconnect to {self.cfg.url}: {exc}")
                    self.changed.set()
                    raise
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
