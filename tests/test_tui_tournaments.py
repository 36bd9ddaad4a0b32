"""Server-hosted tournaments in ``arena tui`` (Textual's pilot, a real server on
loopback): the list from the lobby, a tournament's live standings, entering it, the
pairing's game opening by itself and played to the end, a second TUI watching that game
from the standings, and the table after it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from clients.tui.app import ArenaTui
from clients.tui.tournaments import StandingsScreen, TournamentsScreen
from protocol import messages as m
from tests.tui_pilot import SIZE, game_screen, lobby, opponent, play_my_moves, tui, until

ADMIN = "tui-admin-token-0123456789abcdef"


async def standings_from_the_lobby(pilot: Any, tid: str) -> StandingsScreen:
    """Lobby, ``t``, the tournament's row, Enter: its standings screen, filled."""
    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    await pilot.press("t")
    listing = await until(
        pilot,
        lambda: isinstance(app.screen, TournamentsScreen) and app.screen.tournaments and app.screen,
        "the tournament list",
    )
    assert [t.tournament for t in listing.tournaments] == [tid]
    listing.query_one(DataTable).focus()
    await pilot.press("enter")
    return await until(
        pilot,
        lambda: isinstance(app.screen, StandingsScreen) and app.screen.standings and app.screen,
        "the standings",
    )


@pytest.mark.timeout(90)
async def test_a_tournament_entered_from_the_lobby_played_and_watched(arena: Any) -> None:
    await arena.start(admin_token=ADMIN)
    operator = await arena.client()
    created = await operator.request(
        m.CreateTournament(
            admin_token=ADMIN, name="Evening [/cup]", game="collapsi", format="round_robin"
        )
    )
    tid = created.tournament.tournament
    app = await tui(arena, "ann")
    async with app.run_test(size=SIZE) as pilot:
        table = await standings_from_the_lobby(pilot, tid)
        info = str(table.query_one("#t-info", Static).render())
        assert info.startswith("Evening [/cup] - collapsi base, round_robin\nopen")
        await pilot.press("j")  # enter
        await until(pilot, lambda: [r.name for r in table.standings.rows] == ["ann"], "ann in")
        bob = await arena.client("bob", token="bob-0123456789abcdef")
        await bob.join_tournament(tid)
        await until(pilot, lambda: len(table.standings.rows) == 2, "bob in (live)")
        await operator.request(m.StartTournament(admin_token=ADMIN, tournament=tid))
        matched = await bob.next(type="matched", timeout=20)
        assert matched.tournament == tid
        screen = await until(pilot, lambda: game_screen(app), "ann's game, opened by itself")
        assert screen.model.room == matched.room and screen.model.you == 1 - matched.seat

        watcher = ArenaTui(arena.url, name="", config=Path(os.devnull))
        async with watcher.run_test(size=SIZE) as w:
            seen = await standings_from_the_lobby(w, tid)
            await until(w, lambda: seen.standings.games, "the game in the standings")
            seen.query_one("#t-games", DataTable).focus()
            await w.press("enter")  # watch it
            watching = await until(w, lambda: game_screen(watcher), "the watched game")
            assert watching.model.room == matched.room and watching.model.spectator

        task = asyncio.create_task(opponent(bob, matched.room, (matched.seat,)))
        model = await play_my_moves(pilot, clicks=False)
        await asyncio.wait_for(task, 30)
        await pilot.press("ctrl+l")  # leave the room: back to the standings
        await until(pilot, lambda: app.screen is table, "the standings again")
        await until(pilot, lambda: table.standings.status == "finished", "the end (live)")
        game = table.standings.games[0]
        assert game.room == matched.room and game.status == "finished"
        assert sum(r.points for r in table.standings.rows) == 1
        winner = model.seats[model.result.winner].name if model.result.winner is not None else None
        if winner is not None:
            assert table.standings.rows[0].name == winner and table.standings.rows[0].points == 1
        shown = str(table.query_one("#t-info", Static).render())
        assert "\nfinished" in shown
