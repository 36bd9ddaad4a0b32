"""The lobby's "Finished games" tab: the server's finished games, newest first, a page at a
time (``list_records``), all of them or only yours, filtered by the lobby's game; Enter
on one replays its record. Loaded when the tab is first shown (and by Refresh)."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, DataTable, Static

from clients.client import ArenaError
from protocol import messages as m

#: records asked for at a time (More asks for the next page)
PAGE = 20


class FinishedGames(Vertical):
    """See the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.records: dict[str, m.RecordSummary] = {}
        self.next_offset: int | None = 0
        self.loaded = False  # a page is in (what a test waits for)

    def compose(self) -> ComposeResult:
        with Horizontal(id="finished-top"):
            yield Checkbox("only my games", False, id="mine")
            yield Button("Refresh", id="refresh")
            yield Button("More", id="more", disabled=True)
        yield DataTable(id="finished", cursor_type="row")
        yield Static(id="finished-status")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(
            "record", "game", "variant", "players", "result", "moves", "rated", "finished (UTC)"
        )

    async def load(self, more: bool = False, game: str | None = None) -> None:
        """The first page (or, ``more``, the next one) from the server."""
        app: Any = self.app
        status = self.query_one("#finished-status", Static)
        welcome = app.client.welcome
        if welcome is None or "list_records" not in welcome.features:
            status.update("this server does not list finished games (type a record id)")
            return
        if not more:
            self.records, self.next_offset = {}, 0
            self.query_one(DataTable).clear()
        me = app.client.player.name if app.client.player else None
        mine = self.query_one("#mine", Checkbox).value and me is not None
        try:
            page = await app.client.list_records(
                game=game, player=me if mine else None, limit=PAGE, offset=self.next_offset or 0
            )
        except ArenaError as exc:
            status.update(Text(str(exc)))
            return
        self.show(page)

    def show(self, page: m.RecordList) -> None:
        """Add a page's records to the table."""
        table = self.query_one(DataTable)
        for r in page.records:
            if r.record not in self.records:
                self.records[r.record] = r
                table.add_row(*row(r), key=r.record)
        self.next_offset = page.next_offset
        self.query_one("#more", Button).disabled = page.next_offset is None
        older = " - More for older ones" if page.next_offset is not None else ""
        self.query_one("#finished-status", Static).update(
            f"{len(self.records)} finished game{'' if len(self.records) == 1 else 's'}{older}"
            " - Enter replays one"
        )
        self.loaded = True

    async def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()  # (not the lobby's: its room table handles its own rows)
        await self.app.replay_record(str(event.row_key.value))  # type: ignore[attr-defined]

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("refresh", "more"):
            event.stop()
            await self.load(more=event.button.id == "more", game=self.game())

    async def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        await self.load(game=self.game())

    def game(self) -> str | None:
        """The lobby's game filter."""
        value = self.screen.query_one("#filter").value  # type: ignore[attr-defined]
        return value if isinstance(value, str) else None


def row(r: m.RecordSummary) -> tuple[Any, ...]:
    """A record's cells: names as sent (Text, not markup)."""
    res = r.result
    if res is None:
        result = "-"
    elif res.reason == "aborted":
        result = "aborted"
    elif res.winner is None or res.winner >= len(r.players):
        result = f"no winner ({res.reason})"
    else:
        result = f"{r.players[res.winner]} wins ({res.reason})"
    when = (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime(r.finished_at / 1000)) if r.finished_at else "-"
    )
    kind = ("rated" if r.rated else "casual") + (", private" if r.private else "")
    return (
        r.record,
        r.game,
        f"{r.rules}/{r.variant}",
        Text(", ".join(r.players)),
        Text(result),
        str(r.moves),
        kind,
        when,
    )
