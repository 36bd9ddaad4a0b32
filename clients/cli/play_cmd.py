"""``arena play``: play or watch on a server from the terminal (plain text, line by line).

    arena play --list                                   public rooms
    arena play --watch ROOM                             watch a game to its end
    arena play --name ann --create collapsi             open a room and play in it
    arena play --name bob --join ROOM                   sit down in a room and play
    arena play --name cat --token TOKEN --quick collecto    quick match (rated with a token)

The line mode, for scripts and screen readers (``arena tui`` is the full-screen client).
Standard input is read all the time, alongside the game: a move (when it is your turn),
``say TEXT`` chats, ``resign``, ``abort`` (before everyone has moved), ``board`` shows the
board again. The output format is in the README (``arena play``). Ctrl-C or the end of
standard input leaves the room (a resignation once the game is on) and logs out, so the
name is free at once. Everything goes through :mod:`clients.client`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import threading
from typing import Any

from clients.cli import CliError
from clients.client import TURN_EVENTS, ArenaError, Client
from clients.gameview import LocalClock, collapsi_text, seat_name
from engine.base import Game, game_class
from protocol import messages as m
from protocol.timecontrol import parse_time_control


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server address")
    parser.add_argument("--name", help="your display name (needed to play)")
    parser.add_argument(
        "--token",
        help="secret that claims the name: 16+ characters, 8 of them different (rated "
        "games need it)",
    )
    parser.add_argument("--bot", action="store_true", help="mark this player as a bot")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--list", action="store_true", help="list the public rooms and exit")
    what.add_argument("--watch", metavar="ROOM", help="watch a room's game until it ends")
    what.add_argument("--create", metavar="GAME", help="open a room for GAME and play in it")
    what.add_argument("--join", metavar="ROOM", help="join a room and take a free seat")
    what.add_argument("--invite", metavar="CODE", help="join a private room by invite code")
    what.add_argument("--quick", metavar="GAME", help="quick match: wait for an opponent")
    parser.add_argument("--rules", help="rule set (default: the game's default)")
    parser.add_argument("--variant", help="variant (default: the game's default)")
    parser.add_argument("--seats", type=int, help="number of players (Big Board: 2-4)")
    parser.add_argument(
        "--elimination",
        action="store_true",
        help="Big Board house rule (--create): a player with no move goes out and the "
        "others play on, instead of the game ending at once (rules ruling 3)",
    )
    parser.add_argument(
        "--clock", default="none", help="time control: none, 5+3 (min+s Fischer), fixed:10"
    )
    parser.add_argument("--rated", action="store_true", help="a rated game (--create)")
    parser.add_argument("--casual", action="store_true", help="an unrated quick match")
    parser.add_argument("--private", action="store_true", help="a private room (--create)")


def run(args: argparse.Namespace) -> int:
    if not args.list and not args.watch and not args.name:
        raise CliError("--name is needed to play")
    try:
        return asyncio.run(_main(args))
    except ArenaError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot reach {args.url}: {exc}") from None


def say(*parts: Any) -> None:
    print(*parts, flush=True)


class Board:
    """The engine's picture of the room's game, rebuilt from its setup and moves."""

    def __init__(self) -> None:
        self.game: Game | None = None

    def start(
        self,
        state: m.RoomState | None,
        setup: str,
        history: list[str],
        seats: int,
        position: str | None = None,
    ) -> None:
        """The game of ``state``'s room from ``setup`` and ``history``, at ``position``
        (default: the snapshot's)."""
        if state is None:
            return
        cls = game_class(state.game)

        def from_setup(setup: str) -> Any:
            return cls.from_setup(
                setup,
                rules=state.rules,
                variant=state.variant,
                players=seats,
                options=state.options or None,
            )

        self.game = from_setup(setup)
        for move in history:
            self.game.play(move)
        position = position or getattr(state, "position", None)
        if position and self.game.position() != position:
            # players went out by forfeit, even before the first move (the moves alone do
            # not say): from the position
            self.game = from_setup(position)

    def play(self, move: str) -> None:
        if self.game is not None:
            self.game.play(move)

    def eliminate(self, seat: int, reason: str) -> None:
        """A player of three or more went out by forfeit (``player_eliminated``)."""
        if self.game is not None:
            self.game.eliminate(seat, reason)

    def show(self) -> None:
        if self.game is None:
            return
        if self.game.name == "collapsi":
            view = self.game.view()
            say(collapsi_text(view))
            turn = view.get("to_move")
            if view.get("result") is None and turn is not None:
                say(f"{view['seats'][turn]} to move")
        else:
            say(self.game.render())


class Lines:
    """Standard input, read by a daemon thread so the game never waits for it (and Ctrl-C
    never waits for Enter): lines, then ``None`` at its end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def read() -> None:
            # Ctrl-C must reach the main thread: a SIGINT the kernel gave this thread
            # (blocked in read) would not wake the event loop until its next timer
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            for line in sys.stdin:
                loop.call_soon_threadsafe(self.queue.put_nowait, line)
            loop.call_soon_threadsafe(self.queue.put_nowait, None)

        threading.Thread(target=read, name="stdin", daemon=True).start()


async def _main(args: argparse.Namespace) -> int:
    async with Client(args.url, software="arena-play/0.2") as client:
        if args.list:
            for r in await client.list_rooms():
                players = ", ".join(s.player.name if s.player else "-" for s in r.seats)
                say(f"{r.room}  {r.game}/{r.rules}/{r.variant}  {r.status}  [{players}]")
            return 0
        if args.watch:
            await client.watch(args.watch)
            return await Follow(client, args.watch, me=None).follow()
        await client.login(args.name, token=args.token, bot=args.bot)
        try:
            room, seat = await _sit_down(client, args)
            status = await Follow(client, room, me=args.name, seat=seat).follow()
            if not client.closed.is_set():
                await client.logout()  # the name is free at once for the next run
            return status
        except (asyncio.CancelledError, KeyboardInterrupt, ArenaError):
            # Ctrl-C, or a refusal (a rated queue for a guest...): leave (the server resigns
            # or aborts the game) and free the name now, so the next run can have it
            with contextlib.suppress(ArenaError, OSError, TimeoutError):
                await asyncio.shield(client.logout())
            raise


async def _sit_down(client: Client, args: argparse.Namespace) -> tuple[str, int | None]:
    """Create, join or quick-match a room; its id and this player's seat (if known yet)."""
    if args.create:
        state = await client.create_room(
            args.create,
            rules=args.rules,
            variant=args.variant,
            seats=args.seats,
            time_control=parse_time_control(args.clock),
            rated=args.rated,
            private=args.private,
            seat=0,
            options={"elimination": True} if args.elimination else None,
        )
        say(f"room {state.room}" + (f" invite {state.invite}" if state.invite else ""))
        await client.ready(state.room)
        return state.room, state.you
    if args.join or args.invite:
        state = await client.join(args.join, invite=args.invite)
        await client.take_seat(state.room)
        await client.ready(state.room)
        return state.room, None
    await client.quick_match(
        args.quick,
        rules=args.rules,
        variant=args.variant,
        time_control=parse_time_control(args.clock),
        rated=not args.casual and args.token is not None,  # a guest's games are casual
    )
    say("waiting for an opponent...")
    matched = await client.next(type="matched", timeout=24 * 3600)
    say(f"room {matched.room}")
    return matched.room, matched.seat


class Follow:
    """One room followed to its game's end: events and standard input at once."""

    def __init__(self, client: Client, room: str, me: str | None, seat: int | None = None):
        self.client = client
        self.room = room
        self.me = me
        self.seat = seat
        self.board = Board()
        self.clock = LocalClock()
        self.seats: list[Any] = []
        self.legal: list[str] = []  # my legal moves while it is my turn, else empty

    async def follow(self) -> int:
        """Print the room's events as they come and act on standard input; 0 at game over."""
        track = self.client.rooms[self.room]
        state = track.state
        if state is not None:
            self._snapshot(state)
        lines = Lines() if self.me is not None else None
        events = asyncio.ensure_future(self._next_event(state))
        reading = asyncio.ensure_future(lines.queue.get()) if lines else None
        try:
            while True:
                waiting = {events} | ({reading} if reading else set())
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if events in done:
                    if self._event(events.result()):
                        return 0
                    events = asyncio.ensure_future(self._next_event(None))
                if reading is not None and reading in done:
                    line = reading.result()
                    if line is None:  # end of input: leave the game
                        say("end of input: leaving")
                        await self.client.logout()
                        return 0
                    await self._command(line.strip())
                    reading = asyncio.ensure_future(lines.queue.get())  # type: ignore[union-attr]
        finally:
            for task in (events, reading):
                if task is not None:
                    task.cancel()

    async def _next_event(self, state: Any) -> Any:
        """The room's next event after the snapshot ``state`` (events before it skipped)."""
        while True:
            ev = await self.client.next(room=self.room, timeout=24 * 3600)
            if state is None or getattr(ev, "seq", state.seq + 1) > state.seq:
                return ev

    def _snapshot(self, state: m.RoomState) -> None:
        """Show the room as its snapshot has it (a game may be going on)."""
        self.seats = list(state.seats)
        if state.you is not None:
            self.seat = state.you
        if self.me is None:
            say(f"watching {state.room}: {state.game}, {state.status}")
        if state.setup and state.status == "playing":
            self.board.start(state, state.setup, state.history, len(state.seats))
            self.clock.update(state.clock)
            self._introduce()
            self.board.show()
            self._turn(state.to_move, state.legal_moves)

    def _introduce(self) -> None:
        names = " vs ".join(seat_name(self.seats, i) for i in range(len(self.seats)))
        say(f"players: {names}")
        if self.seat is not None:
            say(f"you are {seat_name(self.seats, self.seat)}, seat {self.seat}")

    def _event(self, ev: Any) -> bool:
        """Show one room event; True when the game is over."""
        if ev.type == "seat_taken":
            if self.me is not None and ev.player.name == self.me:
                self.seat = ev.seat
        elif ev.type == "game_started":
            self.seats = list(ev.seats)
            names = [s.player.name if s.player else "?" for s in ev.seats]
            if self.me in names:
                self.seat = names.index(self.me)
            state = self.client.rooms[self.room].state
            self.board.start(state, ev.setup, [], len(ev.seats), position=ev.position)
            say(f"game {ev.game_number}: " + " vs ".join(names))
            self._introduce()
        elif ev.type == "move_made":
            self.board.play(ev.move)
            say(f"{ev.ply}. {seat_name(self.seats, ev.seat)} plays {ev.move}")
        elif ev.type == "player_eliminated":
            self.board.eliminate(ev.seat, ev.reason)
            say(f"{seat_name(self.seats, ev.seat)} is out ({ev.reason}); the game goes on")
        elif ev.type == "clock_update":
            self.clock.update(ev.clock)
        elif ev.type == "game_over":
            self._game_over(ev)
            return True
        elif ev.type == "chat_message":
            say(f"<{ev.name}> {ev.text}")
        elif ev.type in ("player_disconnected", "player_reconnected", "player_left"):
            say(f"({ev.type.replace('_', ' ')}: {ev.name})")
        elif ev.type == "room_closed":
            say(f"room closed ({ev.reason})")
            return True
        if ev.type in TURN_EVENTS:
            self.clock.update(ev.clock)
            self.board.show()
            self._turn(ev.to_move, ev.legal_moves)
        return False

    def _turn(self, to_move: int | None, legal: list[str]) -> None:
        if (text := self.clock.text(self.seats)) != "":
            say(text)
        if self.seat is not None and to_move == self.seat and legal:
            self.legal = list(legal)
            say("your move; legal: " + " ".join(legal))
        else:
            self.legal = []

    def _game_over(self, ev: m.GameOver) -> None:
        self.clock.stop()
        self.legal = []
        r = ev.result
        if r.reason == "aborted":
            say(f"game over: aborted, no winner, unrated; record {ev.record}")
        else:
            winner = "nobody" if r.winner is None else seat_name(self.seats, r.winner)
            # the finishing order, first to last (ruling 3)
            order = ", ".join(seat_name(self.seats, s) for s in r.order)
            say(f"game over: {winner} wins ({r.reason}); order: {order}; record {ev.record}")
        if (text := self.clock.text(self.seats)) != "":
            say(text)
        for c in ev.ratings:
            say(f"  {c.name}: {c.before:.0f} -> {c.after:.0f}")

    async def _command(self, text: str) -> None:
        """One line of standard input, at any time."""
        try:
            if text == "resign":
                await self.client.resign(self.room)
            elif text == "abort":
                await self.client.abort_game(self.room)
            elif text.startswith("say "):
                await self.client.chat(self.room, text[4:])
            elif text == "board":
                self.board.show()
                self._turn(self.board.game.to_move() if self.board.game else None, self.legal)
            elif not text:
                return
            elif not self.legal:
                say("refused: not your turn (say TEXT, resign, abort, board)")
            else:
                await self.client.move(self.room, text)
        except ArenaError as exc:
            say(f"refused: {exc}")
            if self.legal:
                say("your move; legal: " + " ".join(self.legal))
