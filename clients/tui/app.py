"""``arena tui``: the full-screen client (Textual), on the asyncio loop the client
library already uses. The app owns one :class:`clients.client.Client`: a pump task
reads every server message in order and hands it to the room models and the screen on
top; a dropped connection is reconnected and resumed by itself (the missed events are
caught up through the same pump). Offline games and record replays need no server."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from textual.app import App

from clients.client import ArenaError, Client, ConnectionLost, UnknownSessionError
from clients.record_file import read_record
from clients.tui import settings
from clients.tui.game_screen import GameScreen
from clients.tui.lobby import LeaderboardScreen, LobbyScreen, SignInScreen
from clients.tui.local import LocalMatch, OfflineGame, ReplayScreen, make_puzzle
from clients.tui.memory import release_widgets, settle, thaw
from clients.tui.state import RoomModel
from engine.base import EngineError
from protocol.timecontrol import parse_time_control

CSS = """
#left { width: auto; min-width: 40; padding: 0 1; }
#side { width: 1fr; padding: 0 1; }
#board { width: auto; height: auto; }
#banner { height: 6; padding: 0 1; }
#banner.-over { background: $boost; color: $warning; text-style: bold; }
#moves { height: 8; }
#chat { height: 6; }
#info { height: 6; }
#buttons { height: 3; }
#signin, #create-form { width: 60; padding: 1 2; }
#lobby-top, #lobby-bottom { height: auto; }
#lobby-bottom Input { width: 1fr; }
#confirm { width: 40; height: auto; padding: 1 2; background: $panel; }
#board-row { height: 3; }
#preset { width: 16; }
#deck { width: 1fr; }
#finished-top { height: auto; }
"""


class ServerActions:
    """A player's actions in a server room (what the game screen calls)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def move(self, room: str, move: str) -> None:
        await self.client.move(room, move)

    async def chat(self, room: str, text: str) -> None:
        await self.client.chat(room, text)

    async def resign(self, room: str) -> None:
        await self.client.resign(room)

    async def abort_game(self, room: str) -> None:
        await self.client.abort_game(room)

    async def offer_rematch(self, room: str) -> None:
        await self.client.offer_rematch(room)

    async def leave(self, room: str) -> None:
        await self.client.leave(room)


class ArenaTui(App[None]):
    """See the module docstring."""

    CSS = CSS
    TITLE = "Collapsi Arena"

    def __init__(
        self,
        url: str,
        name: str | None = None,
        token: str | None = None,
        config: Path | None = None,
        record_file: Path | None = None,
        record_game: str | None = None,
        offline: tuple[str, str, str | None] | None = None,
        watch: str | None = None,
        puzzle: tuple[int, str, int] | None = None,
        players: int = 2,
    ) -> None:
        release_widgets()
        super().__init__()
        self.url = url
        self.config = config or settings.config_path()
        self.start_name, self.start_token = name, token
        self.record_file, self.offline, self.start_watch = record_file, offline, watch
        self.record_game = record_game  # a tournament game's id in a games.jsonl
        self.puzzle = puzzle  # (size, difficulty, seed): a Solo puzzle, no server
        self.players = players  # offline: seats, yours and the bots'
        self.client = Client(url, software="arena-tui/0.1")
        self.models: dict[str, RoomModel] = {}
        self.opening: dict[str, int] = {}  # matched rooms waiting for their snapshot: seat
        self.pump: asyncio.Task[None] | None = None
        self.leaving = False
        self.reconnects = 0

    # -- start --------------------------------------------------------------------------------
    async def on_mount(self) -> None:
        if self.record_file is not None:
            await self.push_screen(ReplayScreen(*read_record(self.record_file, self.record_game)))
            return
        if self.offline is not None or self.puzzle is not None:
            if self.puzzle is not None:
                self.notify("dealing a solvable puzzle...")
                local: LocalMatch = await make_puzzle(*self.puzzle)
            else:
                assert self.offline is not None
                local = OfflineGame(*self.offline, players=self.players)
            screen = GameScreen(local.model, local)
            local.on_change = lambda: screen.is_mounted and screen.redraw()
            await self.push_screen(screen)
            settle()
            return
        saved = settings.load(self.config, self.url)
        name = self.start_name if self.start_name is not None else saved.get("name", "")
        token = self.start_token if self.start_token is not None else saved.get("token", "")
        if self.start_name is not None or self.start_watch is not None:
            error = await self.sign_in(name or "", token or None, remember=False)
            if error:
                self.exit(message=error)
            return
        await self.push_screen(SignInScreen(self.url, name or "", token or ""))

    async def sign_in(self, name: str, token: str | None, remember: bool) -> str | None:
        """Connect (and log in with ``name``; without one: watch and replay only)."""
        try:
            if self.client.ws is None:
                await self.client.connect()
            if name:
                await self.client.login(name, token=token)
        except (ArenaError, OSError) as exc:
            return f"cannot sign in: {exc}"
        if name and remember:
            settings.save(self.config, self.url, name, token)
        self.pump = asyncio.create_task(self._pump())
        await self.push_screen(LobbyScreen())
        settle()
        if self.start_watch is not None:
            await self.watch_room(self.start_watch)
        return None

    def games(self) -> list[str]:
        return [g.game for g in self.game_infos()]

    def game_infos(self) -> list[Any]:
        return list(self.client.welcome.games) if self.client.welcome else []

    # -- the pump -----------------------------------------------------------------------------
    async def _pump(self) -> None:
        """Every server message, in order, to the room models and the screen on top."""
        while not self.leaving:
            try:
                msg = await self.client.next(timeout=365 * 24 * 3600)
            except ConnectionLost:
                if self.leaving or not await self._reconnect():
                    return
                continue
            self.receive(msg)

    def receive(self, msg: Any) -> None:
        room = getattr(msg, "room", None)
        if msg.type == "matched" and room not in self.models:
            self.opening[room] = msg.seat
        if room in self.opening and (track := self.client.rooms.get(room)) and track.state:
            # a room the server seated this client in (a quick match, a tournament's
            # pairing): opened once its snapshot is in (``room_state`` follows ``matched``)
            self.run_worker(self._open(track.state, self.opening.pop(room)))
        model = self.models.get(room) if room else None
        if model is not None:
            if msg.type == "room_state":
                model.snapshot(msg)
            else:
                model.apply(msg)
        for screen in self.screen_stack:  # (the lobby and standings below a game stay live)
            handler = getattr(screen, "on_server", None)
            if handler is not None:
                handler(msg)
        if isinstance(self.screen, GameScreen) and self.screen.model is model:
            self.screen.redraw()

    async def _reconnect(self) -> bool:
        """Resume the session after a drop, with backoff; the notes say what happens."""
        self._note("connection lost: reconnecting...")
        delay = 0.2
        for _ in range(30):
            try:
                resumed = await self.client.reconnect()
            except UnknownSessionError:
                self._note("the session is gone (grace period over): sign in again")
                return False
            except (ArenaError, OSError, TimeoutError):
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self.reconnects += 1
            self._note(f"reconnected: caught up ({len(resumed.rooms)} rooms)")
            return True
        self._note("could not reconnect")
        return False

    def _note(self, text: str) -> None:
        for model in self.models.values():
            model.note = text
        if isinstance(self.screen, GameScreen):
            self.screen.redraw()

    # -- rooms --------------------------------------------------------------------------------
    async def _open(self, state: Any, seat: int | None = None) -> None:
        me = self.client.player.name if self.client.player else None
        model = self.models.setdefault(state.room, RoomModel(room=state.room, me=me))
        track = self.client.rooms.get(state.room)
        model.snapshot(track.state if track and track.state else state)
        for ev in self.client.events(state.room):  # what the pump passed before the model
            model.apply(ev)
        if seat is not None:
            model.you = seat
        await self.push_screen(GameScreen(model, ServerActions(self.client)))

    async def play_room(self, room: str | None, invite: str | None = None) -> str | None:
        try:
            state = await self.client.join(room, invite=invite)
            await self.client.take_seat(state.room)
            await self.client.ready(state.room)
        except ArenaError as exc:
            return str(exc)
        await self._open(state)
        return None

    async def watch_room(self, room: str) -> None:
        """Watch a room by its id or, a private room, by its invite code (``join_room``
        as a spectator: the protocol's way, for a signed-in player only)."""
        try:
            await self.client.watch(room)
            state = self.client.rooms[room].state
        except ArenaError as exc:
            try:
                state = await self.client.join(invite=room, role="spectator")
            except ArenaError as by_invite:
                if by_invite.code == "not_authenticated":
                    exc = ArenaError(
                        exc.code, f"{exc.message} (a private room's invite needs a name: --name)"
                    )
                self.notify(str(exc), severity="error")
                return
        await self._open(state)

    async def join_text(self, text: str) -> None:
        """A room id (join it) or an invite code."""
        error = await self.play_room(text)
        if error is not None:
            error = await self.play_room(None, invite=text)
        if error is not None:
            self.notify(error, severity="error")

    async def create_room(self, **form: Any) -> str | None:
        try:
            state = await self.client.create_room(
                form["game"],
                rules=form["rules"],
                variant=form["variant"],
                seats=form["seats"] if form["seats"] != 2 or "big" in form["variant"] else None,
                time_control=parse_time_control(form["clock"]),
                rated=form["rated"],
                private=form["private"],
                seat=0,
                options=form.get("options") or None,
            )
            await self.client.ready(state.room)
        except (ArenaError, EngineError) as exc:
            return str(exc)
        self.pop_screen()
        await self._open(state, 0)
        return None

    async def quick_match(self, game: str, rated: bool = True) -> None:
        """Queue; a guest's match is casual (rated games need a token)."""
        rated = rated and bool(self.client.player and not self.client.player.guest)
        try:
            await self.client.quick_match(game, rated=rated)
        except ArenaError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify("waiting for an opponent...")  # (matched opens the game: receive)

    async def show_leaderboard(self, game: str) -> None:
        try:
            entries = await self.client.leaderboard(game)
        except ArenaError as exc:
            self.notify(str(exc), severity="error")
            return
        await self.push_screen(LeaderboardScreen(game, entries))

    async def replay_record(self, record_id: str) -> None:
        try:
            record = await self.client.get_record(record_id)
        except ArenaError as exc:
            self.notify(str(exc), severity="error")
            return
        await self.push_screen(ReplayScreen(record.data.model_dump(), record_id))

    async def on_unmount(self) -> None:
        thaw()
        self.leaving = True
        if self.pump is not None:
            self.pump.cancel()
        with contextlib.suppress(ArenaError, OSError):
            await self.client.close()  # a clean close: the name is free at once
