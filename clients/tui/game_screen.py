"""The game screen: the board, the side panel (players, ratings, colours, connection
state, clocks ticking locally, moves, chat) and the actions (resign with confirmation,
abort, rematch, leave). Played, watched (read only) or offline, it draws a
:class:`RoomModel`; what a player does goes to an ``actions`` object (the server through
the client library, or a local :class:`engine.match.Match`)."""

from __future__ import annotations

from typing import Any, Protocol

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, Static

from clients.gameview import SEAT_COLOURS
from clients.tui.board import BoardView
from clients.tui.lines import TextLines
from clients.tui.memory import KeysFooter
from clients.tui.state import RoomModel

#: the clock and grace countdowns are redrawn this often (seconds)
TICK = 0.1
#: the side panel shows the latest moves and chat lines, this many (fixed heights: a new
#: line repaints the panel, it does not lay the screen out again; replays show them all)
MOVE_ROWS, CHAT_ROWS = 8, 6


def rows(text: Text, width: int) -> int:
    """How many screen rows ``text`` takes at ``width`` columns (wrapped)."""
    return sum(max(1, -(-cell_len(line) // width)) for line in text.plain.split("\n"))


class Actions(Protocol):
    """What a player's keys do: async calls on the server or the local match."""

    async def move(self, room: str, move: str) -> None: ...
    async def chat(self, room: str, text: str) -> None: ...
    async def resign(self, room: str) -> None: ...
    async def abort_game(self, room: str) -> None: ...
    async def offer_rematch(self, room: str) -> None: ...
    async def leave(self, room: str) -> None: ...


class Confirm(ModalScreen[bool]):
    """Yes or no (resigning is final)."""

    BINDINGS = [Binding("escape", "no", "no"), Binding("y", "yes", "yes")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question)
            with Horizontal():
                yield Button("Yes", id="yes", variant="error")
                yield Button("No", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class GameScreen(Screen[None]):
    """See the module docstring."""

    BINDINGS = [
        Binding("ctrl+r", "resign", "resign"),
        Binding("ctrl+b", "abort", "abort"),
        Binding("ctrl+t", "rematch", "rematch"),
        Binding("ctrl+l", "leave", "leave"),  # (ctrl+q is Textual's quit, for the app)
        Binding("ctrl+y", "replay", "replay"),
    ]

    def __init__(self, model: RoomModel, actions: Actions) -> None:
        super().__init__()
        self.model = model
        self.actions = actions
        self.error = ""
        self.composed = False  # redraws wait for the widgets
        self._players_text = ""
        self._shown: dict[str, Text] = {}  # what each side-panel text shows now
        self._decor: tuple[Any, ...] = ()  # the banner and buttons shown: for what

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="left"):
                yield BoardView(id="board")
                yield Static(id="banner")
                yield Input(placeholder="type a move, or chat (Enter)", id="line")
            with Vertical(id="side"):
                yield TextLines(id="info")
                yield TextLines(id="players")
                yield Label("moves")
                yield TextLines(id="moves")
                yield Label("chat")
                yield TextLines(id="chat")
                with Horizontal(id="buttons"):
                    yield Button("Resign", id="resign", variant="error")
                    yield Button("Abort", id="abort")
                    yield Button("Rematch", id="rematch")
                    yield Button("Leave", id="leave")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.composed = True
        self.set_interval(TICK, self.tick)
        self.redraw()
        self.query_one(BoardView).focus()

    # -- drawing ------------------------------------------------------------------------------
    def redraw(self) -> None:
        """Everything, after an event (nothing before the screen is composed)."""
        if not self.composed:
            return
        m = self.model
        board = self.query_one(BoardView)
        expect = m.board_shape() if m.view is None else None
        board.show(m.view, m.legal if m.my_turn else [], m.last_path, expect)
        watch = " - watching (read only)" if m.spectator else ""
        rated = "rated" if m.rated else "casual"
        invite = f" - invite {m.invite}" if m.invite else ""
        info = m.detail or f"{m.game} {m.variant} - {rated} - room {m.room}{invite}{watch}"
        if not m.local:
            info += f"\nspectators: {m.spectators}"
        if m.note:
            info += f"\n{m.note}"
        if m.status == "playing":
            turn = "your move" if m.my_turn else f"{m.who(m.to_move)} to move"
            info += f"\n{turn}"
        if self.error:
            info += f"\n{self.error}"
        # Text, not markup: names, chat and errors are shown as sent ("[/x]" is no tag)
        self._set("info", Text(info))
        self._set("moves", Text("\n".join(m.moves[-MOVE_ROWS:])))
        self._set("chat", Text("\n".join(m.chat[-CHAT_ROWS:])))
        self.tick()
        decor = (m.banner, m.status, m.spectator)
        if decor != self._decor:  # the game started or ended: the move is drawn first
            self._decor = decor
            self.call_after_refresh(self._decorate)

    def _decorate(self) -> None:
        """The banner and which buttons work. Their rows stay in place (empty, disabled):
        showing or hiding a widget lays the whole screen out again, which cost a game's
        first and last moves 50-100 ms more to draw; restyling the buttons still costs
        10-20 ms, so it waits until the move that ended the game is drawn (bench/tui.py)."""
        m = self.model
        self._set("banner", Text(m.banner or ""))
        self.query_one("#banner", Static).set_class(bool(m.banner), "-over")
        playing = m.status == "playing" and not m.spectator
        self.query_one("#rematch", Button).disabled = m.status != "finished" or m.spectator
        self.query_one("#resign", Button).disabled = not playing
        self.query_one("#abort", Button).disabled = not playing

    def tick(self) -> None:
        """The side panel's clocks and grace countdowns, run down locally."""
        if not self.composed:
            return
        lines = self.model.seat_lines()
        text = "\n".join(lines)
        if text != self._players_text:  # (idle: most ticks change nothing on screen)
            self._players_text = text
            shown = Text()
            for seat, line in zip(self.model.seats, lines, strict=True):
                shown.append("● ", style=SEAT_COLOURS.get(seat.label, "white"))
                shown.append(line + "\n")
            self._set("players", shown)

    def _set(self, wid: str, text: Text) -> None:
        """Show ``text`` in the pane ``wid`` if it is not shown already, and lay the
        screen out again only when its height may change (not fixed in the CSS, and
        another number of rows): a move or a clock tick then repaints a few lines
        instead of re-arranging every widget (bench/tui.py: the draw path)."""
        old = self._shown.get(wid)
        if old == text:
            return
        widget: Static | TextLines = self.query_one(f"#{wid}")  # type: ignore[assignment]
        self._shown[wid] = text
        height = widget.styles.height
        if old is None or height is None or height.is_auto:
            width = max(1, widget.content_region.width)
            layout = old is None or rows(old, width) != rows(text, width)
        else:
            layout = False
        widget.update(text, layout=layout)

    # -- input --------------------------------------------------------------------------------
    async def _do(self, call: Any, *args: Any) -> None:
        from clients.client import ArenaError  # the errors of both kinds of actions
        from engine.base import EngineError

        try:
            await call(self.model.room, *args)
            self.error = ""
        except (ArenaError, EngineError) as exc:
            self.error = f"refused: {exc}"
        self.redraw()

    async def on_board_view_picked(self, event: BoardView.Picked) -> None:
        await self._do(self.actions.move, event.move)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        if not text:
            return
        if self.model.my_turn and text in self.model.legal:
            await self._do(self.actions.move, text)
        elif text.replace(",", "").rstrip("<>^v").isdigit():
            self.error = f"{text} is not a legal move now"
            self.redraw()
        else:
            await self._do(self.actions.chat, text)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        await self.run_action(event.button.id or "")

    def action_resign(self) -> None:
        async def answered(yes: bool | None) -> None:
            if yes:
                await self._do(self.actions.resign)

        self.app.push_screen(Confirm("Resign this game?"), answered)

    async def action_abort(self) -> None:
        await self._do(self.actions.abort_game)

    async def action_rematch(self) -> None:
        await self._do(self.actions.offer_rematch)

    async def action_replay(self) -> None:
        """Step through the finished game's record (from the server)."""
        replay = getattr(self.app, "replay_record", None)
        if self.model.record is None or self.model.local or replay is None:
            self.error = "no record to replay (yet)"
            self.redraw()
            return
        await replay(self.model.record)

    async def action_leave(self) -> None:
        await self._do(self.actions.leave)
        self.dismiss()
