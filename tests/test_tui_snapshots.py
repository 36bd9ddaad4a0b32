"""Snapshot tests of ``arena tui`` screens (pytest-textual-snapshot): each screen is drawn
to an SVG and compared with the one kept under ``tests/__snapshots__``; a change in what
the screen shows fails until the snapshot is reviewed and updated
(``pytest tests/test_tui_snapshots.py --snapshot-update``). Offline games with fixed
seeds, so the pictures do not depend on a server's random deals or room ids; the lobby
draws fixed room summaries (the protocol's models, as ``lobby_subscribe`` answers them)
instead of a server's. The Collapsi one is the README's picture."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from clients.tui.app import ArenaTui
from clients.tui.finished import FinishedGames
from clients.tui.lobby import LobbyScreen
from protocol import examples
from protocol import messages as m

SIZE = (120, 36)


def offline(game: str, variant: str | None = None, players: int = 2) -> ArenaTui:
    return ArenaTui(
        "ws://127.0.0.1:9",
        offline=(game, "random", variant),
        players=players,
        config=Path(os.devnull),
    )


def player(name: str, rating: float | None = None, bot: bool = False) -> m.Player:
    return m.Player(name=name, guest=rating is None and not bot, bot=bot, rating=rating)


def seats(labels: list[str], players: list[m.Player | None]) -> list[m.SeatInfo]:
    return [
        m.SeatInfo(seat=i, label=label, player=p)
        for i, (label, p) in enumerate(zip(labels, players, strict=True))
    ]


ROOMS = [
    m.RoomSummary(
        room="r-8f3k2",
        game="collapsi",
        rules="standard",
        variant="base",
        seats=seats(["red", "blue"], [player("ann", 1500.0), None]),
        time_control=m.Fischer(base_ms=180_000, increment_ms=2_000),
        rated=True,
        status="waiting",
    ),
    m.RoomSummary(
        room="r-2bq7x",
        game="collapsi",
        rules="standard",
        variant="big-board+shifting",
        seats=seats(
            ["red", "blue", "green", "yellow"],
            [
                player("[/x] cat", 1612.0),
                player("dan"),
                player("kestrel-bot", 1623.5, True),
                None,
            ],
        ),
        time_control=m.PerMove(ms=30_000),
        rated=False,
        status="waiting",
    ),
    m.RoomSummary(
        room="r-91zzc",
        game="collecto",
        rules="standard",
        variant="base",
        seats=seats(["first", "second"], [player("eve", 1701.0), player("fay", 1688.0)]),
        time_control=m.Fischer(base_ms=300_000, increment_ms=3_000),
        rated=True,
        status="playing",
        spectators=3,
    ),
]


class FixedLobby(LobbyScreen):
    """The lobby screen with :data:`ROOMS` where a server's answer would be."""

    async def subscribe(self) -> None:
        self.rooms = {r.room: r for r in ROOMS}
        self.redraw()


class LobbyApp(ArenaTui):
    """The client as it is after signing in (the games from the protocol's example
    ``welcome``), showing :class:`FixedLobby`; no connection."""

    async def on_mount(self, event: Any) -> None:
        event.prevent_default()  # (not ArenaTui's: it would sign in)
        self.client.welcome = next(x for x in examples.server_examples() if x.type == "welcome")  # type: ignore[assignment]
        await self.push_screen(FixedLobby())


def test_the_lobby(snap_compare: Any) -> None:
    app = LobbyApp("ws://127.0.0.1:9", config=Path(os.devnull))
    assert snap_compare(app, terminal_size=SIZE)


def test_the_lobbys_finished_games(snap_compare: Any) -> None:
    """The finished games tab with the protocol's example ``record_list`` and a private
    game of the player's own (a server would answer ``list_records`` with them)."""
    page = next(x for x in examples.server_examples() if x.type == "record_list")
    mine = page.records[0].model_copy(
        update={
            "record": "r-7hh2k-3",
            "variant": "big-board+shifting",
            "players": ["ann", "[/x] cat", "kestrel-bot"],
            "result": m.GameResult(winner=None, order=[0, 1, 2], reason="aborted"),
            "moves": 0,
            "rated": False,
            "private": True,
        }
    )

    async def show(pilot: Any) -> None:
        await pilot.press("f")
        await pilot.pause()
        tab = pilot.app.screen.query_one(FinishedGames)
        tab.show(page.model_copy(update={"records": [mine, *page.records], "next_offset": 2}))

    app = LobbyApp("ws://127.0.0.1:9", config=Path(os.devnull))
    assert snap_compare(app, terminal_size=SIZE, run_before=show)


def test_a_collapsi_game(snap_compare: Any) -> None:
    assert snap_compare(offline("collapsi"), terminal_size=SIZE, press=["right", "down"])


def test_a_big_board_game(snap_compare: Any) -> None:
    """Four players: you and three bots."""
    assert snap_compare(offline("collapsi", "big-board", players=4), terminal_size=SIZE)


def test_a_collecto_game(snap_compare: Any) -> None:
    assert snap_compare(offline("collecto"), terminal_size=SIZE, press=["right", "right"])


def test_the_game_over_screen(snap_compare: Any) -> None:
    assert snap_compare(offline("collapsi"), terminal_size=SIZE, press=["ctrl+r", "y"])
