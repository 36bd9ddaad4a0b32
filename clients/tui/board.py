"""The board widget: Collapsi (cards, collapsed cards, pawns in their colours, the last
move's path, legal destinations) and Collecto (7x7 balls in colour and letters, the 28
numbered pushes around the edge), drawn from the server's ``view``. A move is picked by
the arrow keys and Enter, a mouse click, or typed in the game screen's input."""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from clients.gameview import BALL_COLOURS, BALL_LETTERS, SEAT_COLOURS, collapsi_cells
from clients.tui.lines import LinesWidget, text_strips

CELL_W, CELL_H, LEFT = 7, 3, 3  # Collapsi cell size and the row-label margin
SHIFTS = {"left": "<", "right": ">", "up": "^", "down": "v"}
ARROWS = {"<": "←", ">": "→", "^": "↑", "v": "↓"}


def collapsi_destination(move: str) -> int | None:
    """The cell a Collapsi move ends on (``14``, ``3<``: shifting adds a direction)."""
    digits = move.rstrip("<>^v")
    return int(digits) if digits.isdigit() else None


def collecto_pushes(legal: list[str]) -> tuple[set[int], dict[int, set[int]]]:
    """Single pushes, and for double moves the second pushes allowed after each first."""
    singles, doubles = set(), {}  # type: ignore[var-annotated]
    for mv in legal:
        if "," in mv:
            a, b = (int(x) for x in mv.split(","))
            doubles.setdefault(a, set()).add(b)
        elif mv.isdigit():
            singles.add(int(mv))
    return singles, doubles


def collecto_bags(view: dict[str, Any]) -> Text:
    """Each seat's collected balls (coloured letters and counts), points and balls."""
    names = view.get("colours") or {}
    scores, balls = view.get("scores") or [], view.get("balls") or []
    seats = view.get("seats") or []
    out = Text()
    for i, bag in enumerate(view.get("collected") or []):
        label = seats[i] if i < len(seats) else f"seat {i}"
        out.append(f"\n{label:<7}")
        for key, n in sorted(bag.items()):
            colour = names.get(str(key))
            if n and colour is not None:
                out.append(
                    f" {BALL_LETTERS.get(colour, '?')}{n}", style=f"bold {BALL_COLOURS[colour]}"
                )
        if i < len(scores) and i < len(balls):
            out.append(f"  {scores[i]} points ({balls[i]} balls)")
    return out


class BoardView(LinesWidget, can_focus=True):
    """See the module docstring. Posts :class:`BoardView.Picked` with a move."""

    BINDINGS = [
        Binding("left", "nav(-1, 0)", "left", show=False),
        Binding("right", "nav(1, 0)", "right", show=False),
        Binding("up", "nav(0, -1)", "up", show=False),
        Binding("down", "nav(0, 1)", "down", show=False),
        Binding("enter", "pick", "play"),
        Binding("escape", "cancel", "cancel", show=False),
    ]

    class Picked(Message):
        def __init__(self, move: str) -> None:
            super().__init__()
            self.move = move

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.view: dict[str, Any] | None = None
        #: the board's geometry before the deal (``RoomModel.board_shape``): the widget
        #: takes its size at once, so the game's start does not lay the screen out again
        self.expect: dict[str, Any] = {}
        self.legal: list[str] = []
        self.last_path: list[int] = []
        self.cursor = 0
        self.pending: str | None = None  # Shifting Board: destination chosen, shift next
        self.first: int | None = None  # Collecto: a double move's first push

    # -- data ---------------------------------------------------------------------------------
    def show(
        self,
        view: dict[str, Any] | None,
        legal: list[str],
        last_path: list[int],
        expect: dict[str, Any] | None = None,
    ) -> None:
        shape = self._shape()
        self.view, self.legal, self.last_path = view, list(legal), list(last_path)
        self.expect = expect or {}
        if not legal:
            self.pending, self.first = None, None
        # a new layout only when the board's size changes (the first view, a new game);
        # otherwise only the rows that changed are drawn again
        self.changed(layout=self._shape() != shape)

    def _shape(self) -> tuple[Any, ...]:
        return (
            self.game,
            self.width_cells,
            self.size_cells,
            len(self._geometry.get("collected") or []),
        )

    @property
    def _geometry(self) -> dict[str, Any]:
        """The view, or before the deal the expected one's geometry."""
        return self.view if self.view is not None else self.expect

    @property
    def game(self) -> str:
        return self._geometry.get("game", "collapsi")

    @property
    def width_cells(self) -> int:
        return 7 if self.game == "collecto" else int(self._geometry.get("width") or 4)

    @property
    def size_cells(self) -> int:
        if self.game == "collecto":
            return 28  # the cursor walks the pushes
        return len(self._geometry.get("cards") or [])

    def get_content_width(self, container: Any, viewport: Any) -> int:
        if self.game == "collecto":
            return 4 + 3 * 7 + 4
        return LEFT + CELL_W * self.width_cells

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        if self.game == "collecto":  # the pushes around the board, each seat's balls, a note
            return 7 + 2 + len(self._geometry.get("collected") or []) + 1
        rows = max(1, self.size_cells // max(1, self.width_cells))
        return 1 + CELL_H * rows + 1

    # -- drawing ------------------------------------------------------------------------------
    def make_lines(self, width: int, base: Style) -> list[Strip]:
        """:meth:`render`'s text as strips (see :class:`clients.tui.lines.LinesWidget`:
        a move repaints the rows it changed)."""
        return text_strips(self.render(), width, base, self.app.console, wrap=False)

    def render(self) -> Text:
        if self.view is None:
            return Text("waiting for the game to start")
        if self.game == "collecto":
            return self._collecto()
        return self._collapsi()

    def _collapsi(self) -> Text:
        view = self.view or {}
        w = self.width_cells
        seats = view.get("seats") or []
        dests = {d for mv in self.legal if (d := collapsi_destination(mv)) is not None}
        if self.pending is not None:
            dests = {int(self.pending)}
        cells = collapsi_cells(view)
        exit_cell = view.get("exit")  # a Solo puzzle's exit (ruling 7)
        out = Text(" " * LEFT + "".join(f"{chr(97 + c):^{CELL_W}}" for c in range(w)) + "\n")
        for r in range(len(cells) // w):
            for line in range(CELL_H):
                out.append(f"{r + 1:>2} " if line == 1 else " " * LEFT)
                for i, card, pawn, gone in cells[r * w : (r + 1) * w]:
                    bg = "grey15" if gone else "grey30"
                    if i in self.last_path:
                        bg = "grey50"
                    if i in dests:
                        bg = "dark_green"
                    style = f"on {bg}"
                    if i == self.cursor and self.has_focus:
                        style += " reverse"
                    if line == 0:
                        body = f"{i:<{CELL_W - 1}}"
                    elif line == 1:
                        if pawn is not None:
                            colour = SEAT_COLOURS.get(seats[pawn], "white")
                            out.append(f"  {'J' if card == 'J' else card}", style=style)
                            out.append(" ● ", style=f"bold {colour} {style}")
                            out.append(" ", style="")
                            continue
                        body = f"{'  ' if gone else ''}{'··' if gone else card:^{CELL_W - 1}}"
                        body = body[: CELL_W - 1]
                    elif i == exit_cell:
                        body = f"{'exit':^{CELL_W - 1}}"
                    else:
                        body = " " * (CELL_W - 1)
                    out.append(body, style=style)
                    out.append(" ")
                out.append("\n")
        if self.pending is not None:
            out.append("shift: an arrow key; Esc: back\n")  # (fits a 4x4 board)
        return out

    def _collecto(self) -> Text:
        view = self.view or {}
        rows = view.get("rows") or []
        names = view.get("colours") or {}
        singles, doubles = collecto_pushes(self.legal)
        wanted = singles | set(doubles)
        if self.first is not None:
            wanted = doubles.get(self.first, set())

        def arrow(n: int, label: str) -> Text:
            style = "bold green" if n in wanted else "grey42"
            if n == self.cursor and self.has_focus:
                style += " reverse"
            return Text(label, style=style)

        out = Text("    ")
        for c in range(7):
            out.append_text(arrow(14 + c, f"{14 + c:>2}↑"))
        out.append("\n")
        for r, row in enumerate(rows):
            out.append_text(arrow(r, f"{r:>2}← "))
            for ball in row:
                colour = names.get(str(ball))
                if colour is None:
                    out.append(" · ", style="grey35")
                else:
                    letter = BALL_LETTERS.get(colour, "?")
                    out.append(f" {letter} ", style=f"bold black on {BALL_COLOURS[colour]}")
            out.append_text(arrow(7 + r, f" →{7 + r}"))
            out.append("\n")
        out.append("    ")
        for c in range(7):
            out.append_text(arrow(21 + c, f"{21 + c:>2}↓"))
        out.append_text(collecto_bags(view))
        if self.first is not None:
            out.append(f"\ndouble move: {self.first}, then one of {sorted(wanted)}")
        return out

    # -- input --------------------------------------------------------------------------------
    def action_nav(self, dx: int, dy: int) -> None:
        if self.pending is not None:  # Shifting Board: the arrow is the shift
            key = {(-1, 0): "<", (1, 0): ">", (0, -1): "^", (0, 1): "v"}[(dx, dy)]
            move = f"{self.pending}{key}"
            if move in self.legal:
                self.pending = None
                self.post_message(self.Picked(move))
            return
        n = self.size_cells
        if n == 0:
            return
        if self.game == "collecto":
            self.cursor = (self.cursor + dx + dy) % n
        else:
            w = self.width_cells
            self.cursor = (self.cursor + dx + dy * w) % n
        self.refresh()

    def action_cancel(self) -> None:
        self.pending, self.first = None, None
        self.refresh()

    def action_pick(self) -> None:
        self.pick(self.cursor)

    def pick(self, target: int) -> None:
        """Choose cell (Collapsi) or push (Collecto) ``target``: a move when it is one."""
        if not self.legal:
            return
        if self.game == "collecto":
            singles, doubles = collecto_pushes(self.legal)
            if self.first is not None:
                if target in doubles.get(self.first, set()):
                    move, self.first = f"{self.first},{target}", None
                    self.post_message(self.Picked(move))
            elif target in singles:
                self.post_message(self.Picked(str(target)))
            elif target in doubles:
                self.first = target
            self.refresh()
            return
        moves = [mv for mv in self.legal if collapsi_destination(mv) == target]
        if len(moves) == 1 and moves[0] == str(target):
            self.post_message(self.Picked(moves[0]))
        elif moves:
            self.pending = str(target)
            self.refresh()

    def on_click(self, event: Any) -> None:
        x, y = event.x, event.y
        if self.game == "collecto":
            target = None
            if y == 0 and x >= 4:
                target = 14 + (x - 4) // 3
            elif y == 8 and x >= 4:
                target = 21 + (x - 4) // 3
            elif 1 <= y <= 7 and x < 4:
                target = y - 1
            elif 1 <= y <= 7 and x >= 4 + 21:
                target = 7 + y - 1
            if target is not None and 0 <= target < 28:
                self.cursor = target
                self.pick(target)
            return
        col, row = (x - LEFT) // CELL_W, (y - 1) // CELL_H
        if x >= LEFT and y >= 1 and 0 <= col < self.width_cells:
            cell = row * self.width_cells + col
            if 0 <= cell < self.size_cells:
                self.cursor = cell
                self.pick(cell)
