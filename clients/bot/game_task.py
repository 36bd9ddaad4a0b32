"""One game in one room, from the bot's seat: events in, moves out.

The runner routes every message about the room to :meth:`GameTask.feed`; the task
keeps the engine's :class:`~engine.base.Game` up to date from them (the deal, each
move, each forfeit; a snapshot after a resume rebuilds it), and when the bot's seat
is to move asks its :class:`~clients.bot.brains.Brain` with the time the clocks allow.
A move lost to a dropped connection is asked for again by the snapshot the resume
brings, so a task never needs to know about reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from clients.bot.brains import RESIGN, Brain, StruckOut
from clients.bot.timing import move_time
from clients.client import ArenaError, ConnectionLost, RateLimitedError, Sent
from clients.engines.process import EngineProcessError, EngineRefused
from engine.base import EngineError, Game, game_class
from protocol import messages as m

Log = Callable[[str], None]

#: how long run()'s part of a turn begun at once waits for the engine's answer to be
#: sent first: an engine that takes longer leaves the runner idle meanwhile anyway
HOLD_S = 0.005
#: the messages run() acts on (the others are not queued)
_FOLLOWED = frozenset(
    ("room_state", "game_started", "move_made", "player_eliminated", "game_over", "room_closed")
)


class GameTask:
    """Plays the bot's seat of ``room`` until the game there ends (or the room closes)."""

    def __init__(
        self,
        client_of: Callable[[], Any],
        room: str,
        brain: Brain,
        log: Log,
        margin_ms: int,
        online: asyncio.Event,
        say: Log | None = None,
    ) -> None:
        self.client_of = client_of  # the runner's current Client (it changes on re-login)
        self.room = room
        self.brain = brain
        self.log = log
        self.margin_ms = margin_ms
        self.online = online  # set while the session is connected (not mid-resume)
        self.say = say  # the run's output (a line as each game starts)
        self.brain_ready = True  # False: the runner starts the brain as the game starts
        self.queue: asyncio.Queue[tuple[Any, float]] = asyncio.Queue()
        self.game: Game | None = None
        self.seat: int | None = None
        self.time_control: Any = m.Untimed()
        self.opponents: list[str] = []
        self.result: m.GameResult | None = None
        self.started_game = 0
        self._meta: tuple[str, str, str, dict[str, Any]] | None = None
        self._new_pending = False  # a game followed that the brain has not been told of
        self._refused = False  # the engine refused this game: it is asked nothing more
        self.declined: str | None = None  # what the engine said as it refused the game
        self._moved_at = -1  # the history length the bot last answered for
        self._waiting = True  # run() waits for (or, not started, will take) the next message
        self._early: Any = None  # the message fed that was followed as it arrived
        #: a move sent as the engine's answer was read: (history length, move, its client,
        #: the request)
        self._sent: tuple[int, str, Any, Sent] | None = None
        self._held: tuple[Any, float] | None = None  # the message run() gets once sent
        self._hold: asyncio.TimerHandle | None = None
        self._ended = False  # game_over or room_closed has come (run() may not know yet)
        self._thinking = False  # run() waits for the brain's move
        self._interrupt: asyncio.Future[None] | None = None  # (kept until it is done)

    def feed(self, msg: Any) -> None:
        received = time.monotonic()
        kind = msg.type
        if kind not in _FOLLOWED:
            return
        if self._waiting and self._held is None and self.queue.empty():
            if kind == "game_started" and self._meta is None:
                return  # (nothing to follow yet: the room_state that comes next says it all)
            if kind == "move_made":
                began = self._begin_turn(msg, received)
            else:
                began = kind in ("room_state", "game_started") and self._begin_game(msg, received)
            if began:
                # run()'s part waits until the move is sent (or HOLD_S passed): it would
                # otherwise run first, and the engine's answer wait behind it
                self._held = (msg, received)
                self._hold = asyncio.get_running_loop().call_later(HOLD_S, self._unhold)
                return
        if kind in ("game_over", "room_closed"):
            self._ended = True  # (an answer still on its way is not sent)
            if self._thinking and self._interrupt is None:  # (no use thinking on)
                self._interrupt = asyncio.ensure_future(self.brain.interrupt())
        self._unhold()  # (in order: what was held first)
        self.queue.put_nowait((msg, received))

    def _unhold(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            if self._hold is not None:
                self._hold.cancel()
            self.queue.put_nowait(held)

    def _begin_turn(self, ev: m.MoveMade, received: float) -> bool:
        """The move that hands the bot its turn, as it arrives: follow it and ask the brain
        at once, from the callback (no task, no turn of the loop: a move then crosses the
        runner in the callbacks that carry it, the frame's and the engine's answer's).
        run() sees the same message next and finishes the turn as usual. True: begun. (It
        runs inside the websocket's data callback: a failure must not take the frames
        after it with it; the task's way is taken.)"""
        try:
            self._apply_move(ev)
            self._early = ev  # (followed: run() does not apply it again)
            game, seat, legal = self.game, self.seat, ev.legal_moves
            if game is None or ev.to_move != seat or not legal or seat is None:
                return False
            if self._moved_at == len(game.history) or not self.online.is_set() or self._refused:
                return False
            mt = move_time(ev.clock, self.time_control, seat, received, self.margin_ms)
            return self.brain.begin(game, list(legal), mt, self._answered)
        except Exception as exc:
            self.log(f"could not begin the turn at once: {exc!r}")
            return False

    def _begin_game(self, st: m.RoomState | m.GameStarted, received: float) -> bool:
        """A message that starts a game, as it arrives: follow it and have the brain get
        ready at once (an engine's ``newgame``, from the callback); the first turn begins
        as the engine says it is ready (:meth:`_ready`), so that a game's first move
        crosses the runner in callbacks too. run() sees the same message next and
        finishes the start as usual. True: begun. (Inside the websocket's data callback:
        a failure leaves the message to the task.)"""
        try:
            self._follow(st)
            self._early = st  # (followed: run() does not follow it again)
            game, seat = self.game, self.seat
            if not self._new_pending or game is None or seat is None:
                return False
            if not self.online.is_set():
                return False
            return self.brain.begin_game(game, seat, lambda: self._ready(st, received))
        except Exception as exc:
            self.log(f"could not begin the game at once: {exc!r}")
            return False

    def _ready(self, st: m.RoomState | m.GameStarted, received: float) -> None:
        """The brain is ready for the game :meth:`_begin_game` began: the first turn, if
        the bot's, begins at once. (Inside the engine's output callback: a failure leaves
        the turn to the task.)"""
        begun = False
        try:
            game, seat, legal = self.game, self.seat, st.legal_moves
            if game is None or seat is None or st.to_move != seat or not legal:
                return  # (not the bot's turn: the task's way, as every turn of the others')
            if not self._ended and self.online.is_set() and self._moved_at != len(game.history):
                mt = move_time(st.clock, self.time_control, seat, received, self.margin_ms)
                begun = self.brain.begin(game, list(legal), mt, self._answered)
        except Exception as exc:
            self.log(f"could not begin the first turn at once: {exc!r}")
        finally:
            if not begun:
                self._unhold()

    def _answered(self, move: str) -> None:
        """A legal answer to a search begun at once, as its line is read: sent now. (It
        runs inside the engine's output callback, which must go on reading: a failure
        leaves the move to the task.)"""
        try:
            if not self._ended and self.game is not None and self.online.is_set():
                client = self.client_of()
                sent = client.move_now(self.room, move)
                if sent is not None:
                    sent.reply.add_done_callback(_seen)  # (whoever waits for it, or nobody)
                    self._sent = (len(self.game.history), move, client, sent)
        except Exception as exc:
            self.log(f"could not send {move!r} at once: {exc!r}")
        finally:
            self._unhold()

    async def run(self) -> m.GameResult | None:
        """Play until ``game_over`` (the result) or ``room_closed`` (``None``)."""
        try:
            result = await self._until_over()
        finally:
            self._ended = True  # (an answer still on its way is not sent)
        await self.brain.abandon()  # (a search begun for a turn the game's end cut short)
        return result

    async def _until_over(self) -> m.GameResult | None:
        turn: tuple[list[str], Any, float] | None = None
        while True:
            self._waiting = True
            try:
                msg, received = await self.queue.get()
            finally:
                self._waiting = False
            kind = msg.type
            if kind in ("room_state", "game_started"):
                if msg is not self._early:  # (else followed as it arrived)
                    self._follow(msg)
                if self._new_pending:
                    await self._new_game()
                if kind == "room_state" and msg.status == "finished" and msg.result is not None:
                    self.result = msg.result
                    return msg.result
            elif kind == "move_made":
                if msg is not self._early:  # (else followed as it arrived)
                    self._apply_move(msg)
            elif kind == "player_eliminated":
                self._apply_forfeit(msg)
            elif kind == "game_over":
                self.result = msg.result
                self.log(f"game over: {msg.result.reason}, winner seat {msg.result.winner}")
                await self.brain.game_over(msg.result.winner, msg.result.reason)
                return msg.result
            elif kind == "room_closed":
                return None
            if kind in ("room_state", "game_started", "move_made", "player_eliminated"):
                legal = list(msg.legal_moves or [])
                mine = msg.to_move is not None and msg.to_move == self.seat and legal
                turn = (legal, msg.clock, received) if mine else None
            if turn is not None and self.queue.empty():  # act on the latest news only
                await self._think(*turn)
                turn = None

    # -- the game ----------------------------------------------------------------------
    def _follow(self, msg: m.RoomState | m.GameStarted) -> None:
        if msg.type == "room_state":
            self._follow_state(msg)
        else:
            self._follow_start(msg)

    def _follow_state(self, st: m.RoomState) -> None:
        """A snapshot (on joining, after a resume): the authoritative game so far (a new
        one: :attr:`_new_pending`)."""
        self.seat = st.you
        self.time_control = st.time_control
        self._meta = (st.game, st.rules, st.variant, st.options)
        self.opponents = [
            s.player.name for s in st.seats if s.player is not None and s.seat != st.you
        ]
        if st.setup is None or st.status == "waiting":
            return
        fresh = st.game_number != self.started_game
        self.game = self._build(len(st.seats), st.setup)
        for move in st.history:
            self._play(move)
        if fresh:
            self.started_game = st.game_number
            self._new_pending = True

    def _follow_start(self, ev: m.GameStarted) -> None:
        if ev.game_number <= self.started_game or self._meta is None:
            return  # known already, or the room_state that follows will tell
        self.seat = next(
            (s.seat for s in ev.seats if s.player and s.player.name == self._me()), self.seat
        )
        self.opponents = [  # (all seated now: a room's snapshot may have come before them)
            s.player.name for s in ev.seats if s.player is not None and s.seat != self.seat
        ]
        self.game = self._build(len(ev.seats), ev.setup)
        self.started_game = ev.game_number
        self._new_pending = True

    def _me(self) -> str | None:
        player = self.client_of().player
        return None if player is None else player.name

    def _build(self, players: int, setup: str) -> Game:
        assert self._meta is not None
        name, rules, variant, options = self._meta
        return game_class(name).from_setup(
            setup, rules=rules, variant=variant, players=players, options=options or None
        )

    async def _new_game(self) -> None:
        assert self.game is not None and self.seat is not None
        self._new_pending = False
        g = self.game
        self.log(f"game {self.started_game} starts: {g.name}/{g.variant}, seat {self.seat}")
        if self.say is not None:
            vs = ", ".join(self.opponents) or "?"
            self.say(
                f"playing {self.room}: {g.name}/{g.variant}/{g.rules} vs {vs}, seat {self.seat}"
            )
        try:
            await self.brain.new_game(self.game, self.seat)
        except EngineRefused as exc:
            self.log(f"the engine refused the game: {exc}; resigning")
            self._refused = True  # (ENGINE_PROTOCOL.md: not sent that game)
            self.declined = str(exc)
            await self.send_move(RESIGN)

    def _play(self, move: str) -> None:
        assert self.game is not None
        try:
            self.game.play(move)
        except EngineError as exc:  # the server decides; our copy is only for the brain
            self.log(f"cannot follow move {move!r} locally: {exc}")

    def _apply_move(self, ev: m.MoveMade) -> None:
        if self.game is not None and ev.ply == len(self.game.history) + 1:
            self._play(ev.move)
        self.log(f"move {ev.ply}: seat {ev.seat} plays {ev.move}")

    def _apply_forfeit(self, ev: m.PlayerEliminated) -> None:
        self.log(f"seat {ev.seat} is out ({ev.reason}) after move {ev.ply}")
        if self.game is not None:
            try:
                self.game.eliminate(ev.seat, ev.reason)
            except EngineError as exc:
                self.log(f"cannot follow the forfeit locally: {exc}")

    # -- moves -------------------------------------------------------------------------
    async def _think(self, legal: list[str], clock: m.Clock | None, received: float) -> None:
        if self.game is None or self.seat is None or self._refused:
            return
        if self._moved_at == len(self.game.history):
            return  # answered already (a snapshot repeating the same turn)
        mt = move_time(clock, self.time_control, self.seat, received, self.margin_ms)
        started = time.monotonic()
        self._thinking = True
        try:
            move = await self.brain.choose(self.game, legal, mt)
        except StruckOut:
            await self.send_move(RESIGN)
            raise
        except EngineProcessError as exc:
            self.log(f"no move: {exc}")
            move = None
        finally:
            self._thinking = False
        took = (time.monotonic() - started) * 1000
        if self._ended and self._sent is None:
            self.log(f"the game ended while thinking; {move!r} not sent")
            return
        early, self._sent = self._sent, None
        if early is not None and early[0] != len(self.game.history):
            early = None  # (another position's)
        if early is not None:
            move = early[1]  # sent as the engine's answer was read: played, whatever followed
        if move is None:
            self.log(f"no move in {took:.0f} ms; the clock decides")
            if mt.hard_ms is None:
                await self.send_move(RESIGN)
            return
        self._moved_at = len(self.game.history)
        self.log(f"plays {move} ({took:.0f} ms)")
        if early is None or not await self._sent_early(early[2], early[3], move):
            await self.send_move(move)

    async def _connected(self) -> Any:
        """The client once the session is connected. A task told of a drop (its request
        failed) may run before the runner has seen it and cleared ``online``: the runner's
        turn is queued already (the connection's close woke it), so one turn of the loop
        lets it; sending meanwhile would spend the tries on the dead connection."""
        pause = 0.0
        while True:
            await self.online.wait()
            client = self.client_of()
            if not client.closed.is_set():
                return client
            await asyncio.sleep(pause)
            pause = 0.05

    async def send_move(self, move: str) -> None:
        """Play ``move`` (or resign) once the session is online; a move lost with a
        dropped connection is sent again after the resume (if it had arrived, the
        server refuses the copy, which is logged). Refusals are logged, never raised."""
        for _ in range(3):
            client = await self._connected()
            closed = client.closed  # (this connection's: a reconnect makes a new event)
            try:
                if move == RESIGN:
                    await client.resign(self.room)
                else:
                    await client.move(self.room, move)
                return
            except ConnectionLost:
                self.log("connection lost while sending; sending again after the resume")
                # (told before the client's reader has closed it: _connected() would give
                # the same dead client back at once, and the tries be spent in a moment)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(10):
                        await closed.wait()
            except (ArenaError, TimeoutError) as exc:
                self.log(f"the server refused {move!r}: {exc}")
                return

    async def _sent_early(self, client: Any, sent: Sent, move: str) -> bool:
        """The server's answer to a move :meth:`_answered` sent; False: send it again (the
        connection dropped, or it was refused as too fast: a patient send waits that out)."""
        try:
            await client.reply(sent)
        except ConnectionLost:
            self.log("connection lost while sending; sending again after the resume")
            return False
        except RateLimitedError:
            return False
        except (ArenaError, TimeoutError) as exc:
            self.log(f"the server refused {move!r}: {exc}")
        return True


def _seen(fut: asyncio.Future[Any]) -> None:
    """(a reply's error is taken, so that one nobody waited for is not reported as lost)"""
    if not fut.cancelled():
        fut.exception()
