"""``arena play``: play or watch on a server from the terminal (plain text, line by line).

    arena play --list                                   public rooms
    arena play --watch ROOM                             watch a game to its end
    arena play --name ann --create collapsi             open a room and play in it
    arena play --name bob --join ROOM                   sit down in a room and play
    arena play --name cat --token s3cret --quick collecto   quick match (rated)

When it is your turn the board and your legal moves are printed and a move is
read from standard input (``resign`` resigns, ``say TEXT`` chats). Everything
goes through :mod:`clients.client`, like the bots and the tournament runner.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from clients.cli import CliError
from clients.client import TURN_EVENTS, ArenaError, Client
from engine.base import Game, game_class
from engine.match import TimeControl
from protocol import messages as m


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server address")
    parser.add_argument("--name", help="your display name (needed to play)")
    parser.add_argument("--token", help="secret that claims the name (rated games need it)")
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
        "--clock", default="none", help="time control: none, 5+3 (min+s Fischer), fixed:10"
    )
    parser.add_argument("--rated", action="store_true", help="a rated game (--create)")
    parser.add_argument("--private", action="store_true", help="a private room (--create)")


def _time_control(text: str) -> Any:
    tc = TimeControl.parse(text)
    if tc.kind == "fischer":
        return m.Fischer(base_ms=tc.base_ms, increment_ms=tc.increment_ms)
    if tc.kind == "fixed":
        return m.PerMove(ms=tc.per_move_ms)
    return m.Untimed()


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

    def start(self, state: m.RoomState | None, setup: str, history: list[str], seats: int) -> None:
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
        position = getattr(state, "position", None)
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
        if self.game is not None:
            say(self.game.render())


async def _main(args: argparse.Namespace) -> int:
    async with Client(args.url, software="arena-play/0.1") as client:
        if args.list:
            for r in await client.list_rooms():
                players = ", ".join(s.player.name if s.player else "-" for s in r.seats)
                say(f"{r.room}  {r.game}/{r.rules}/{r.variant}  {r.status}  [{players}]")
            return 0
        if args.watch:
            state = await client.watch(args.watch)
            return await _follow(client, args.watch, state, me=None)
        await client.login(args.name, token=args.token, bot=args.bot)
        if args.create:
            state = await client.create_room(
                args.create,
                rules=args.rules,
                variant=args.variant,
                seats=args.seats,
                time_control=_time_control(args.clock),
                rated=args.rated,
                private=args.private,
                seat=0,
            )
            say(f"room {state.room}" + (f" invite {state.invite}" if state.invite else ""))
            await client.ready(state.room)
        elif args.join or args.invite:
            state = await client.join(args.join, invite=args.invite)
            await client.take_seat(state.room)
            await client.ready(state.room)
        else:
            await client.quick_match(args.quick, rules=args.rules, variant=args.variant)
            say("waiting for an opponent...")
            matched = await client.next(type="matched", timeout=3600)
            state = await client.next(type="room_state", room=matched.room)
        return await _follow(client, state.room, state, me=client.player.name)  # type: ignore[union-attr]


async def _follow(client: Client, room: str, state: Any, me: str | None) -> int:
    board = Board()
    snapshot = client.rooms[room].state
    if me is None and snapshot is not None:
        say(f"watching {room}: {snapshot.game}, {snapshot.status}")
    if isinstance(state, m.RoomState) and state.setup:
        board.start(state, state.setup, state.history, len(state.seats))
        board.show()
    my_seat: int | None = None
    loop = asyncio.get_running_loop()
    while True:
        ev = await client.next(room=room, timeout=24 * 3600)
        if ev.type == "game_started":
            snapshot = client.rooms[room].state
            board.start(snapshot, ev.setup, [], len(ev.seats))
            names = [s.player.name if s.player else "?" for s in ev.seats]
            my_seat = names.index(me) if me in names else None
            say(f"game {ev.game_number}: " + " vs ".join(names))
            board.show()
        elif ev.type == "move_made":
            board.play(ev.move)
            say(f"{ev.ply}. seat {ev.seat} plays {ev.move}")
            board.show()
        elif ev.type == "player_eliminated":
            board.eliminate(ev.seat, ev.reason)
            say(f"seat {ev.seat} is out ({ev.reason}); the game goes on")
            board.show()
        elif ev.type == "game_over":
            r = ev.result
            winner = "nobody" if r.winner is None else f"seat {r.winner}"
            say(f"game over: {winner} wins ({r.reason}); record {ev.record}")
            for c in ev.ratings:
                say(f"  {c.name}: {c.before:.0f} -> {c.after:.0f}")
            return 0
        elif ev.type == "chat_message":
            say(f"<{ev.name}> {ev.text}")
        elif ev.type in ("player_disconnected", "player_reconnected", "room_closed"):
            say(f"({ev.type.replace('_', ' ')}: {getattr(ev, 'name', '')})")
        to_move = getattr(ev, "to_move", None)
        if my_seat is not None and to_move == my_seat and ev.type in TURN_EVENTS:
            await _my_turn(client, room, ev.legal_moves, loop)


async def _my_turn(
    client: Client, room: str, legal: list[str], loop: asyncio.AbstractEventLoop
) -> None:
    while True:
        say("your move; legal: " + " ".join(legal))
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            await client.resign(room)
            return
        text = line.strip()
        try:
            if text == "resign":
                await client.resign(room)
            elif text.startswith("say "):
                await client.chat(room, text[4:])
                continue
            else:
                await client.move(room, text)
            return
        except ArenaError as exc:
            say(f"refused: {exc}")
