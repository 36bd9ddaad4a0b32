"""Sign-in, lobby (live room list, filter, quick match, join by invite, watch, records;
finished games: :mod:`clients.tui.finished`) and the leaderboard (the create-room form:
:mod:`clients.tui.create_form`). They call the app (:mod:`clients.tui.app`),
which owns the connection."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)

from clients.gameview import clock_label
from clients.tui.create_form import CreateScreen
from clients.tui.finished import FinishedGames
from clients.tui.memory import KeysFooter, settle
from clients.tui.tournaments import TournamentsScreen
from protocol import messages as m


class SignInScreen(Screen[None]):
    """Name and optional token (remembered per server); empty name: watch only."""

    def __init__(self, url: str, name: str = "", token: str = "") -> None:
        super().__init__()
        self.url, self.name_, self.token = url, name, token

    def compose(self) -> ComposeResult:
        with Vertical(id="signin"):
            yield Label(f"Collapsi Arena - {self.url}")
            yield Input(self.name_, placeholder="name", id="name")
            yield Input(
                self.token,
                placeholder="token (optional: a guest plays casual)",
                id="token",
                password=True,
            )
            yield Checkbox("remember on this computer", True, id="remember")
            yield Button("Sign in", id="signin-go", variant="primary")
            yield Static(id="signin-error")
        yield KeysFooter()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        await self.go()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        await self.go()

    async def go(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        token = self.query_one("#token", Input).value.strip() or None
        remember = self.query_one("#remember", Checkbox).value
        error = await self.app.sign_in(name, token, remember)  # type: ignore[attr-defined]
        self.query_one("#signin-error", Static).update(Text(error or ""))


class LobbyScreen(Screen[None]):
    """The live list of rooms (``lobby_subscribe``) and everything to start a game."""

    BINDINGS = [
        Binding("c", "create", "create room"),
        Binding("q", "quick", "quick match"),
        Binding("u", "quick(False)", "unrated match"),
        Binding("l", "leaderboard", "leaderboard"),
        Binding("w", "watch", "watch selected"),
        Binding("t", "tournaments", "tournaments"),
        Binding("f", "finished", "finished"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rooms: dict[str, m.RoomSummary] = {}
        self.stale = False  # the list changed while another screen was on top
        self.listed = False  # the first list is in (what a test waits for)

    def compose(self) -> ComposeResult:
        games = [(g, g) for g in self.app.games()]  # type: ignore[attr-defined]
        with Horizontal(id="lobby-top"):
            yield Select(games, prompt="every game", id="filter")
            yield Button("Create room", id="create")
            yield Button("Quick match", id="quick")
            yield Button("Leaderboard", id="leaderboard")
            yield Button("Tournaments", id="tournaments")
        with TabbedContent(id="lobby-tabs"):
            with TabPane("Live rooms", id="live"):
                yield DataTable(id="rooms", cursor_type="row")
            with TabPane("Finished games", id="finished-tab"):
                yield FinishedGames(id="finished-games")
        with Horizontal(id="lobby-bottom"):
            yield Input(placeholder="room id or invite code: Enter joins", id="join")
            yield Input(placeholder="record id: Enter replays", id="record")
        yield Static(id="lobby-status")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(
            "room", "game", "variant", "players", "clock", "rated", "status", "watching"
        )
        self.app.run_worker(self.subscribe())

    async def subscribe(self) -> None:
        value = self.query_one("#filter", Select).value
        game = value if isinstance(value, str) else None
        rooms = await self.app.client.subscribe_lobby(game)  # type: ignore[attr-defined]
        self.rooms = {r.room: r for r in rooms}
        self.redraw()
        self.listed = True

    def redraw(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for r in self.rooms.values():
            players = ", ".join(
                f"{s.player.name}{f' {s.player.rating:.0f}' if s.player.rating else ''}"
                if s.player
                else "-"
                for s in r.seats
            )
            table.add_row(
                r.room,
                r.game,
                f"{r.rules}/{r.variant}",
                Text(players),  # names as sent, not markup
                clock_label(r.time_control),
                "rated" if r.rated else "casual",
                r.status,
                str(r.spectators),
                key=r.room,
            )
        self.query_one("#lobby-status", Static).update(f"{len(self.rooms)} rooms")

    def on_server(self, msg: Any) -> None:
        if msg.type in ("room_added", "room_updated"):
            self.rooms[msg.summary.room] = msg.summary
        elif msg.type == "room_removed":
            self.rooms.pop(msg.room, None)
        else:
            return
        # on top only: Textual's ``is_current`` is also true of the screen right under the
        # top one, and redrawing the lobby under a game laid both screens out again (a
        # game's first move, with its room's ``room_updated``, cost 2 layouts: bench/tui.py)
        if self.app.screen is self:
            self.redraw()
        else:
            self.stale = True

    def on_screen_resume(self) -> None:
        settle()  # back from a game (or a form): collect its widgets now, not mid-game
        if self.stale:
            self.stale = False
            self.redraw()

    async def on_select_changed(self, event: Select.Changed) -> None:
        await self.subscribe()
        finished = self.query_one(FinishedGames)
        if finished.loaded:
            await finished.load(game=finished.game())

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        finished = self.query_one(FinishedGames)
        if event.pane.id == "finished-tab" and not finished.loaded:
            await finished.load(game=finished.game())

    def action_finished(self) -> None:
        """``f``: the finished games tab (again: back to the live rooms)."""
        tabs = self.query_one(TabbedContent)
        tabs.active = "live" if tabs.active == "finished-tab" else "finished-tab"

    async def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        room = self.rooms.get(str(event.row_key.value))
        if room is None:
            return
        if room.status == "waiting" and any(s.player is None for s in room.seats):
            await self.app.play_room(room.room)  # type: ignore[attr-defined]
        else:
            await self.app.watch_room(room.room)  # type: ignore[attr-defined]

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if event.input.id == "join":
            await self.app.join_text(text)  # type: ignore[attr-defined]
        else:
            await self.app.replay_record(text)  # type: ignore[attr-defined]

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        await self.run_action(event.button.id or "")

    def action_create(self) -> None:
        self.app.push_screen(CreateScreen())

    def action_tournaments(self) -> None:
        self.app.push_screen(TournamentsScreen())

    async def action_quick(self, rated: bool = True) -> None:
        """Queue for a quick match of the filtered game: rated (casual for a guest), or
        casual (``u``)."""
        value = self.query_one("#filter", Select).value
        game = value if isinstance(value, str) else "collapsi"
        await self.app.quick_match(game, rated=rated)  # type: ignore[attr-defined]

    async def action_leaderboard(self) -> None:
        value = self.query_one("#filter", Select).value
        await self.app.show_leaderboard(value if isinstance(value, str) else "collapsi")  # type: ignore[attr-defined]

    async def action_watch(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            await self.app.watch_room(str(key))  # type: ignore[attr-defined]


class LeaderboardScreen(Screen[None]):
    BINDINGS = [Binding("escape", "close", "back")]

    def __init__(self, game: str, entries: list[m.LeaderboardEntry]) -> None:
        super().__init__()
        self.game, self.entries = game, entries

    def compose(self) -> ComposeResult:
        yield Label(f"Leaderboard: {self.game}")
        yield DataTable(id="leaders")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "name", "rating", "games", "bot")
        for e in self.entries:
            table.add_row(
                str(e.rank), Text(e.name), f"{e.rating:.0f}", str(e.games), "bot" if e.bot else ""
            )

    def action_close(self) -> None:
        self.dismiss()
