"""The create-room form: every option of ``create_room`` (game, rule set, variant and
the Collapsi combinations, seats, clock presets or custom, rated or casual, private),
and the ``custom`` variant's board: a preset or a deck of your own (PROTOCOL.md, "Game
payloads": ``options``; ruling 8)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from clients.tui.memory import KeysFooter
from engine.collapsi.deck import PRESETS

CLOCKS = [
    ("no clock", "none"),
    ("1+0 bullet", "1+0"),
    ("3+2 blitz", "3+2"),
    ("5+3 blitz", "5+3"),
    ("10+5 rapid", "10+5"),
    ("30 s per move", "fixed:30"),
    ("custom", "custom"),
]
#: the custom board's choices: the presets, or the deck typed beside them
BOARDS = [(name, name) for name in PRESETS] + [("my deck:", "deck")]
DECK_HINT = "J=2 1=6 2=6 3=6 4=5 size=5"


class CreateScreen(Screen[None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape", "close", "back")]

    def compose(self) -> ComposeResult:
        info = self.app.game_infos()  # type: ignore[attr-defined]
        first = info[0]
        with VerticalScroll(id="create-form"):
            yield Label("game")
            yield Select(
                [(g.game, g.game) for g in info], value=first.game, id="game", allow_blank=False
            )
            yield Label("rule set")
            yield Select(
                [(r, r) for r in first.rule_sets],
                value=first.rule_sets[0],
                id="rules",
                allow_blank=False,
            )
            yield Label("variant")
            yield Select(
                variant_options(first), value=first.variants[0], id="variant", allow_blank=False
            )
            yield Label("custom board (variant custom): a preset, or my deck")
            with Horizontal(id="board-row"):
                yield Select(BOARDS, value="5x5", id="preset", allow_blank=False)
                yield Input(placeholder=DECK_HINT, id="deck")
            yield Label("players")
            yield Select([(str(n), n) for n in (2, 3, 4)], value=2, id="seats", allow_blank=False)
            yield Label("clock")
            yield Select(CLOCKS, value="none", id="clock", allow_blank=False)
            yield Input(placeholder="custom clock: 5+3 or fixed:20", id="custom")
            yield Checkbox("rated", False, id="rated")
            yield Checkbox("private (invite only)", False, id="private")
            yield Button("Create", id="create-go", variant="primary")
            yield Static(id="create-error")
        yield KeysFooter()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "game":
            return
        info = {g.game: g for g in self.app.game_infos()}[str(event.value)]  # type: ignore[attr-defined]
        rules = self.query_one("#rules", Select)
        rules.set_options([(r, r) for r in info.rule_sets])
        rules.value = info.rule_sets[0]
        variant = self.query_one("#variant", Select)
        variant.set_options(variant_options(info))
        variant.value = info.variants[0]

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        clock = str(self.query_one("#clock", Select).value)
        if clock == "custom":
            clock = self.query_one("#custom", Input).value.strip() or "none"
        variant = str(self.query_one("#variant", Select).value)
        options: dict[str, Any] = {}
        if "custom" in variant.split("+"):
            try:
                options = custom_options(
                    str(self.query_one("#preset", Select).value),
                    self.query_one("#deck", Input).value,
                )
            except ValueError as exc:
                self.query_one("#create-error", Static).update(Text(str(exc)))
                return
        error = await self.app.create_room(  # type: ignore[attr-defined]
            game=str(self.query_one("#game", Select).value),
            rules=str(self.query_one("#rules", Select).value),
            variant=variant,
            seats=int(self.query_one("#seats", Select).value),  # type: ignore[arg-type]
            clock=clock,
            rated=self.query_one("#rated", Checkbox).value,
            private=self.query_one("#private", Checkbox).value,
            options=options,
        )
        self.query_one("#create-error", Static).update(Text(error or ""))

    def action_close(self) -> None:
        self.dismiss()


def custom_options(board: str, deck: str) -> dict[str, Any]:
    """The ``custom`` variant's options: ``{"preset": NAME}``, or (``board == "deck"``)
    the deck typed as card counts and the board's size, ``J=2 1=6 2=6 3=6 4=5 size=5``
    (``width=6 height=4`` for a board that is not square). The server checks that the
    counts fill the board, with a jack per player (``bad_setup`` otherwise)."""
    if board != "deck":
        return {"preset": board}
    counts: dict[str, int] = {}
    shape: dict[str, int] = {}
    for part in deck.replace(",", " ").split():
        key, _, value = part.partition("=")
        key = key.strip().upper()
        if not value.isdigit() or not key:
            raise ValueError(f"{part!r}: write card=count or size=N, e.g. {DECK_HINT}")
        if key in ("SIZE", "WIDTH", "HEIGHT"):
            shape[key.lower()] = int(value)
        elif key in ("J", "1", "2", "3", "4"):
            counts[key] = int(value)
        else:
            raise ValueError(f"{part!r}: the cards are J, 1, 2, 3 and 4")
    if not counts or not shape:
        raise ValueError(f"my deck: card counts and the board's size, e.g. {DECK_HINT}")
    return {"deck": counts, **shape}


def variant_options(info: Any) -> list[tuple[str, str]]:
    """The game's variants plus the Collapsi combinations (Big Board + Shifting, a
    custom board + Shifting...)."""
    out = [(v, v) for v in info.variants]
    for board in ("big-board", "custom"):
        for other in ("shifting", "players-choice"):
            if board in info.variants and other in info.variants:
                out.append((f"{board}+{other}", f"{board}+{other}"))
    return out
