"""Textual pilot helpers shared by the ``arena tui`` tests: wait for a condition (bounded),
type a line, play the TUI player's turns, a library client as the opponent."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Input

from clients.tui.app import ArenaTui
from clients.tui.board import BoardView, collapsi_destination
from clients.tui.game_screen import GameScreen
from clients.tui.lines import TextLines
from clients.tui.lobby import LobbyScreen

SIZE = (150, 48)


async def until(pilot: Any, cond: Callable[[], Any], what: str, limit: int = 400) -> Any:
    """Let the app run until ``cond()`` is true (bounded); its value."""
    for _ in range(limit):
        if value := cond():
            return value
        await pilot.pause(0.025)
    raise AssertionError(f"timed out waiting for {what}")


def game_screen(app: ArenaTui) -> GameScreen | None:
    """The game screen on top, once mounted (its widgets exist: a screen just pushed
    may not have them yet, seen under load)."""
    screen = app.screen
    return screen if isinstance(screen, GameScreen) and screen.composed else None


def lobby(app: ArenaTui) -> LobbyScreen | None:
    """The lobby on top once its first room list is in: before that, a key pressed or a
    field filled may reach a screen not yet composed (seen under load)."""
    screen = app.screen
    return screen if isinstance(screen, LobbyScreen) and screen.listed else None


def drawn(screen: Any, pane: str) -> str:
    """The text a game screen's side-panel pane draws (``#info``, ``#chat``...): its
    lines as strips, as the terminal gets them, trailing blanks cut."""
    widget = screen.query_one(pane, TextLines)
    return "\n".join(line.text.rstrip() for line in widget.lines(widget.size.width)).rstrip()


async def type_line(pilot: Any, text: str) -> None:
    line = pilot.app.screen.query_one("#line", Input)
    line.value = text
    await line.action_submit()


async def play_my_moves(pilot: Any, clicks: bool = True) -> Any:
    """Play every turn of the TUI's player until the game is over: the first move by a
    mouse click on its cell (Collapsi), by arrow keys and Enter on a push (Collecto), then
    typed. Returns the model."""
    app = pilot.app
    first = True
    while True:
        screen = await until(pilot, lambda: game_screen(app), "the game screen")
        model = screen.model
        await until(
            pilot,
            lambda model=model: model.my_turn or model.status == "finished",
            f"my turn ({model.you=}, {model.status=}, {model.to_move=}, {model.seq=})",
        )
        if model.status == "finished":
            return model
        before = len(model.moves)
        move = model.legal[0]
        board = screen.query_one(BoardView)
        if first and clicks and model.game == "collapsi" and move.isdigit():
            cell, w = int(move), board.width_cells
            await pilot.click(BoardView, offset=(3 + 7 * (cell % w) + 2, 1 + 3 * (cell // w) + 1))
        elif first and clicks and model.game == "collecto" and move.isdigit():
            board.focus()
            board.cursor = 0
            for _ in range(int(move)):
                await pilot.press("right")
            await pilot.press("enter")
        elif first and clicks and move[-1] in "<>^v":  # Shifting: destination, then shift
            board.focus()
            board.pick(collapsi_destination(move))  # type: ignore[arg-type]
            await pilot.press({"<": "left", ">": "right", "^": "up", "v": "down"}[move[-1]])
        else:
            await type_line(pilot, move)
        first = False
        await until(
            pilot,
            lambda model=model, before=before: (
                len(model.moves) > before or model.status == "finished"
            ),
            f"move {move} ({board.legal=} {board.cursor=} {screen.error=} {model.moves=})",
        )


async def opponent(client: Any, room: str, seats: tuple[int, ...]) -> None:
    """Library clients play ``seats``' first legal move until the game is over."""
    while True:
        ev = await client.next(
            type=("game_started", "move_made", "player_eliminated", "game_over"),
            room=room,
            timeout=60,
        )
        if ev.type == "game_over":
            return
        if ev.to_move in seats:
            await client.move(room, ev.legal_moves[-1])


async def tui(arena: Any, name: str = "ann", **kw: Any) -> ArenaTui:
    return ArenaTui(
        arena.url, name=name, token=f"{name}-0123456789abcdef", config=Path(os.devnull), **kw
    )
