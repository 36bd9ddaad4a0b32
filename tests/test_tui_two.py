"""Two ``arena tui`` clients, each driven by its own Textual pilot, against one real
server on loopback: a room made with the create form and joined from the lobby, and a
flag fall both players see; the live spectator count both show as a watcher comes and
goes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select, Static

from clients.tui.app import ArenaTui
from clients.tui.create_form import CreateScreen
from tests.tui_pilot import SIZE, drawn, game_screen, lobby, tui, type_line, until


async def create_from_the_form(pilot: Any, clock: str) -> Any:
    """Open the create form from the lobby, pick a custom clock, create; the model."""
    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    await pilot.press("c")
    form = await until(pilot, lambda: isinstance(app.screen, CreateScreen) and app.screen, "form")
    form.query_one("#clock", Select).value = "custom"
    form.query_one("#custom", Input).value = clock
    await pilot.click("#create-go")
    screen = await until(pilot, lambda: game_screen(app), "the new room")
    return screen.model


async def join_from_the_lobby(pilot: Any, room: str) -> Any:
    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    join = app.screen.query_one("#join", Input)
    join.value = room
    await join.action_submit()
    screen = await until(pilot, lambda: game_screen(app), "the joined room")
    return screen.model


@pytest.mark.timeout(90)
async def test_a_flag_fall_is_shown_to_both_players_each_in_their_own_tui(arena: Any) -> None:
    await arena.start()
    ann_app, bob_app = await tui(arena, "ann"), await tui(arena, "bob")
    async with ann_app.run_test(size=SIZE) as ann, bob_app.run_test(size=SIZE) as bob:
        ann_model = await create_from_the_form(ann, "fixed:3")
        bob_model = await join_from_the_lobby(bob, ann_model.room)
        pilots = {ann_model.you: (ann, ann_model), bob_model.you: (bob, bob_model)}
        assert set(pilots) == {0, 1}
        for _ in range(2):  # a move each: a flag fall before that is an abort
            await until(ann, lambda: ann_model.to_move is not None, "a player to move")
            pilot, model = pilots[ann_model.to_move]
            await until(pilot, lambda model=model: model.my_turn, "a turn")
            before = len(model.moves)
            await type_line(pilot, model.legal[0])
            await until(pilot, lambda model=model, b=before: len(model.moves) > b, "the move")
        loser = ann_model.to_move  # ...who now lets the 3 s run out
        for pilot, model in pilots.values():
            await until(pilot, lambda model=model: model.banner, "the banner", limit=800)
            assert model.result.reason == "timeout" and model.result.winner == 1 - loser
            assert "wins (timeout)" in model.banner
            banner = game_screen(pilot.app).query_one("#banner", Static)  # type: ignore[union-attr]
            # (drawn just after the board: GameScreen._decorate)
            shown = await until(pilot, lambda b=banner: str(b.render()), "the banner drawn")
            assert shown.startswith("Game over:") and "(timeout)" in shown
            assert model.clock.now()[loser] == 0


def info(pilot: Any) -> str:
    return drawn(game_screen(pilot.app), "#info")


@pytest.mark.timeout(60)
async def test_the_spectator_count_is_live_for_the_players_and_the_watchers(arena: Any) -> None:
    """ann plays in her TUI, a TUI watches her room: both show how many watch, as a
    library client comes to watch and goes."""
    await arena.start()
    ann_app = await tui(arena, "ann")
    async with ann_app.run_test(size=SIZE) as ann:
        model = await create_from_the_form(ann, "none")
        assert model.spectators == 0 and "spectators: 0" in info(ann)
        watcher = ArenaTui(arena.url, watch=model.room, config=Path(os.devnull))
        async with watcher.run_test(size=SIZE) as w:
            seen = (await until(w, lambda: game_screen(watcher), "the watch")).model
            assert seen.spectator and seen.spectators == 1
            await until(ann, lambda: model.spectators == 1, "ann told of the watcher")
            carl = await arena.client("carl")
            await carl.watch(model.room)
            for pilot, m in ((ann, model), (w, seen)):
                await until(pilot, lambda m=m: m.spectators == 2, "the second watcher")
                assert "spectators: 2" in info(pilot)
            await carl.leave(model.room)
            for pilot, m in ((ann, model), (w, seen)):
                await until(pilot, lambda m=m: m.spectators == 1, "one watcher left")
                assert "spectators: 1" in info(pilot)
