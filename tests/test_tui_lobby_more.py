"""``arena tui``'s lobby, driven by Textual's pilot against a real server on loopback: the
finished games tab (``list_records``) and a replay opened from it, ``--watch`` with a
private room's invite code, and the create form's custom board (a preset or a deck)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import strong
from textual.widgets import Button, Checkbox, DataTable, Input, Select, Static

from clients.tui.app import ArenaTui
from clients.tui.create_form import CreateScreen, custom_options
from clients.tui.finished import FinishedGames
from clients.tui.local import ReplayScreen
from tests.tui_pilot import SIZE, game_screen, lobby, opponent, tui, until


async def played(arena: Any, a: Any, b: Any, **room: Any) -> str:
    """``a`` and ``b`` play a whole game (library clients); its record id."""
    state = await a.create_room("collapsi", seat=0, **room)
    if state.invite:
        await b.join(invite=state.invite)
    else:
        await b.join(state.room)
    await b.take_seat(state.room, 1)
    await a.ready(state.room)
    await b.ready(state.room)
    await asyncio.gather(opponent(a, state.room, (0,)), opponent(b, state.room, (1,)))
    return [e for e in a.events(state.room) if e.type == "game_over"][-1].record


def finished(app: ArenaTui) -> FinishedGames | None:
    tab = app.screen.query(FinishedGames)
    return tab.first() if tab and tab.first().loaded else None


@pytest.mark.timeout(60)
async def test_finished_games_listed_in_a_lobby_tab_mine_only_and_one_replayed(
    arena: Any,
) -> None:
    await arena.start()
    ann, bob = await arena.client("ann", token="ann"), await arena.client("bob")
    cat, dan = await arena.client("cat"), await arena.client("dan")
    ours = await played(arena, ann, bob)
    theirs = await played(arena, cat, dan)
    hidden = await played(arena, cat, dan, private=True)  # not ann's: not listed to her
    moves = (await ann.get_record(ours)).data.moves
    await ann.close()  # (a clean close: the name is free for the TUI at once)
    app = ArenaTui(arena.url, name="ann", token=strong("ann"), config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(app), "the lobby")
        await pilot.press("f")
        tab = await until(pilot, lambda: finished(app), "the finished games")
        table = tab.query_one("#finished", DataTable)
        assert [k.value for k in table.rows] == [theirs, ours]
        assert hidden not in tab.records
        row = table.get_row(ours)
        assert str(row[3]) == "ann, bob" and row[6] == "casual"
        assert "wins (" in str(row[4]) and row[5] == str(len(moves))
        assert "2 finished games" in str(tab.query_one("#finished-status", Static).render())
        tab.loaded = False
        tab.query_one("#mine", Checkbox).value = True
        await until(pilot, lambda: finished(app), "only ann's games")
        assert [k.value for k in table.rows] == [ours]
        table.focus()
        await pilot.press("enter")
        screen = await until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen, "the replay"
        )
        await pilot.press("end")
        assert screen.ply == len(moves)


@pytest.mark.timeout(60)
async def test_finished_games_come_a_page_at_a_time(arena: Any, monkeypatch: Any) -> None:
    from clients.tui import finished as module

    monkeypatch.setattr(module, "PAGE", 1)
    await arena.start()
    ann, bob = await arena.client("ann"), await arena.client("bob")
    first, second = await played(arena, ann, bob), await played(arena, bob, ann)
    app = ArenaTui(arena.url, name="", config=Path(os.devnull))  # watching only: anonymous
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(app), "the lobby")
        await pilot.press("f")
        tab = await until(pilot, lambda: finished(app), "the first page")
        table = tab.query_one("#finished", DataTable)
        assert [k.value for k in table.rows] == [second]
        tab.loaded = False
        await pilot.click("#more")
        await until(pilot, lambda: finished(app), "the second page")
        assert [k.value for k in table.rows] == [second, first]


@pytest.mark.timeout(60)
async def test_watch_a_private_room_by_its_invite_code(arena: Any) -> None:
    """``--watch INVITE`` watches a private room (signed in: the protocol's join as a
    spectator); without a name it says that a name is needed."""
    await arena.start()
    bob = await arena.client("bob")
    state = await bob.create_room("collapsi", seat=0, private=True)
    assert state.invite
    app = ArenaTui(arena.url, name="vic", watch=state.invite, config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the watched room")
        assert screen.model.room == state.room and screen.model.spectator
        joined = await bob.next(type="spectators", room=state.room)
        assert joined.count == 1
    anonymous = ArenaTui(arena.url, watch=state.invite, config=Path(os.devnull))
    async with anonymous.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(anonymous), "the lobby")
        said = await until(
            pilot,
            lambda: [n.message for n in anonymous._notifications if "--name" in n.message],
            "the error",
        )
        assert "invite needs a name" in said[0]
        assert game_screen(anonymous) is None


async def open_form(pilot: Any) -> CreateScreen:
    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    await pilot.press("c")
    return await until(pilot, lambda: isinstance(app.screen, CreateScreen) and app.screen, "form")


@pytest.mark.timeout(60)
async def test_a_custom_deck_from_the_create_form(arena: Any) -> None:
    """A deck of your own: a 4x4 board of 3 jacks; a deck that does not fill the board is
    refused by the server, and a mistyped one before it is sent."""
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot)
        form.query_one("#variant", Select).value = "custom+shifting"
        form.query_one("#preset", Select).value = "deck"
        error = form.query_one("#create-error", Static)
        form.query_one("#deck", Input).value = "J=3 1=4 2 3=3"
        await pilot.click("#create-go")
        assert "'2': write card=count" in str(error.render())
        form.query_one("#deck", Input).value = "J=3 1=4 2=4 3=3 4=3 size=5"
        form.query_one("#create-go", Button).press()  # (a second click soon after the
        # first can be taken for a double click: pressed as Enter would)
        shown = await until(
            pilot, lambda: "bad_setup" in (t := str(error.render())) and t, "the refusal"
        )
        assert shown.startswith("bad_setup")  # (the server's: the counts do not fill 5x5)
        form.query_one("#deck", Input).value = "J=3 1=4 2=4 3=3 4=2 size=4"
        form.query_one("#create-go", Button).press()
        screen = await until(pilot, lambda: game_screen(app), "the new room")
        assert screen.model.variant == "custom+shifting"
        bob = await arena.client("bob")  # (while ann is in it: an empty room closes)
        state = await bob.join(screen.model.room)
        assert state.options == {"deck": {"J": 3, "1": 4, "2": 4, "3": 3, "4": 2}, "size": 4}


@pytest.mark.timeout(60)
async def test_a_custom_board_preset_from_the_create_form(arena: Any) -> None:
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_form(pilot)
        form.query_one("#variant", Select).value = "custom"
        form.query_one("#preset", Select).value = "5x5-3p"
        form.query_one("#seats", Select).value = 3
        await pilot.click("#create-go")
        screen = await until(pilot, lambda: game_screen(app), "the new room")
        assert len(screen.model.seats) == 3
        bob = await arena.client("bob")
        assert (await bob.join(screen.model.room)).options == {"preset": "5x5-3p"}


def test_the_deck_as_typed() -> None:
    assert custom_options("7x7", "ignored") == {"preset": "7x7"}
    assert custom_options("deck", "j=2, 1=6 2=6 3=6 4=5 width=5 height=5") == {
        "deck": {"J": 2, "1": 6, "2": 6, "3": 6, "4": 5},
        "width": 5,
        "height": 5,
    }
    for bad in ("", "J=2", "size=4", "Q=2 size=4", "J=x size=4"):
        with pytest.raises(ValueError):
            custom_options("deck", bad)
