"""Server-hosted tournaments in the full-screen client: the list (``list_tournaments``),
one tournament's standings, live (``tournament_subscribe``), with its games; entering
and withdrawing; watching a game of it, or replaying a finished one. A pairing opens
the game screen by itself (the app opens every ``matched`` room)."""

from __future__ import annotations

import contextlib
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Label, Static

from clients.client import ArenaError
from clients.gameview import clock_label
from clients.tui.memory import KeysFooter
from protocol import messages as m


class TournamentsScreen(Screen[None]):
    """Every tournament the server lists; Enter opens one."""

    BINDINGS = [Binding("escape", "close", "back"), Binding("r", "load", "refresh")]

    def __init__(self) -> None:
        super().__init__()
        self.tournaments: list[m.TournamentSummary] = []

    def compose(self) -> ComposeResult:
        yield Label("Tournaments (Enter: standings, games, enter)")
        yield DataTable(id="tournaments", cursor_type="row")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("id", "name", "game", "format", "status", "players", "round", "clock")
        self.app.run_worker(self.action_load())

    async def action_load(self) -> None:
        try:
            self.tournaments = await self.app.client.list_tournaments()  # type: ignore[attr-defined]
        except ArenaError as exc:
            self.notify(str(exc), severity="error")
            return
        table = self.query_one(DataTable)
        table.clear()
        for t in self.tournaments:
            players = f"{t.players}" + (f"/{t.max_players}" if t.max_players else "")
            table.add_row(
                t.tournament,
                Text(t.name),  # as sent, not markup
                f"{t.game} {t.variant}",
                t.format,
                "cancelled" if t.cancelled else t.status,
                players,
                str(t.round or 0),
                clock_label(t.time_control),
                key=t.tournament,
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(StandingsScreen(str(event.row_key.value)))

    def action_close(self) -> None:
        self.dismiss()


class StandingsScreen(Screen[None]):
    """One tournament: its table and games, kept live; ``j`` enters, ``x`` withdraws,
    Enter on a game watches it (or replays it once finished)."""

    BINDINGS = [
        Binding("j", "join", "enter"),
        Binding("x", "leave", "withdraw"),
        Binding("escape", "close", "back"),
    ]

    def __init__(self, tournament: str) -> None:
        super().__init__()
        self.tournament = tournament
        self.standings: m.Standings | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="t-info")
        yield DataTable(id="t-rows", cursor_type="row")
        yield Label("games (Enter: watch, or replay a finished one)")
        yield DataTable(id="t-games", cursor_type="row")
        yield KeysFooter()

    def on_mount(self) -> None:
        rows = self.query_one("#t-rows", DataTable)
        rows.add_columns("#", "name", "points", "games", "won", "drawn", "lost", "tiebreak")
        games = self.query_one("#t-games", DataTable)
        games.add_columns("round", "room", "players", "status", "points", "how")
        self.app.run_worker(self.subscribe())

    async def subscribe(self) -> None:
        try:
            self.show(await self.app.client.subscribe_tournament(self.tournament))  # type: ignore[attr-defined]
        except ArenaError as exc:
            self.query_one("#t-info", Static).update(Text(f"{self.tournament}: {exc}"))

    def on_server(self, msg: Any) -> None:
        if msg.type != "standings" or msg.tournament != self.tournament:
            return
        if self.app.screen is self:  # (not ``is_current``: see LobbyScreen.on_server)
            self.show(msg)
        else:  # (under a game of it: drawn when the standings show again)
            self.standings = msg

    def on_screen_resume(self) -> None:
        if self.standings is not None:
            self.show(self.standings)

    def show(self, st: m.Standings) -> None:
        """The table and games as the server sent them last."""
        self.standings = st
        s = st.summary
        me = self.app.client.player.name if self.app.client.player else None  # type: ignore[attr-defined]
        head = f"{s.name} - {s.game} {s.variant}, {s.format}" if s else self.tournament
        status = "cancelled" if s and s.cancelled else st.status
        entered = any(r.name == me and not r.withdrawn for r in st.rows)
        info = f"{head}\n{status}, round {st.round or 0}" + (" - you are in" if entered else "")
        self.query_one("#t-info", Static).update(Text(info))
        rows = self.query_one("#t-rows", DataTable)
        rows.clear()
        for r in st.rows:
            name = r.name + (" (withdrawn)" if r.withdrawn else "")
            tiebreak = "" if r.tiebreak is None else f"{r.tiebreak:g}"
            rows.add_row(
                str(r.rank), Text(name), f"{r.points:g}", str(r.games),
                str(r.wins), str(r.draws), str(r.losses), tiebreak,
            )  # fmt: skip
        games = self.query_one("#t-games", DataTable)
        games.clear()
        for i, g in enumerate(st.games or []):
            points = "-".join(f"{p:g}" for p in g.points) if g.points else ""
            games.add_row(
                str(g.round), g.room, Text(" vs ".join(g.players)), g.status,
                points, g.reason or "", key=str(i),
            )  # fmt: skip

    async def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "t-games" or self.standings is None:
            return
        game = (self.standings.games or [])[int(str(event.row_key.value))]
        if game.status == "playing":
            await self.app.watch_room(game.room)  # type: ignore[attr-defined]
        elif game.record is not None:
            await self.app.replay_record(game.record)  # type: ignore[attr-defined]

    async def action_join(self) -> None:
        client = self.app.client  # type: ignore[attr-defined]
        await self._ask(client.join_tournament, "entered: your games open by themselves")

    async def action_leave(self) -> None:
        await self._ask(self.app.client.leave_tournament, "withdrawn")  # type: ignore[attr-defined]

    async def _ask(self, call: Any, done: str) -> None:
        try:
            await call(self.tournament)
        except ArenaError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(done)

    async def action_close(self) -> None:
        client = self.app.client  # type: ignore[attr-defined]
        # (a connection that is going takes its subscription with it)
        with contextlib.suppress(ArenaError, OSError):
            await client.request(m.TournamentUnsubscribe(tournament=self.tournament))
        self.dismiss()
