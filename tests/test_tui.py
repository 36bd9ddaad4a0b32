"""``arena tui`` driven by Textual's headless pilot against a real server on loopback:
whole games (Collapsi standard, Big Board with 3 players, Shifting Board, Player's
Choice, Collecto), quick match, a spectator joining mid-game, a socket killed mid-game,
a flag fall, chat on the opponent's turn, a resign before the first move, abort and a
rematch, replay."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from clients.tui.app import ArenaTui
from clients.tui.board import BoardView
from clients.tui.lobby import LobbyScreen
from clients.tui.local import ReplayScreen
from protocol import messages as m
from tests.tui_pilot import SIZE, game_screen, lobby, opponent, play_my_moves, tui, type_line, until


@pytest.mark.parametrize(
    ("game", "variant", "seats"),
    [
        ("collapsi", "base", 2),
        ("collapsi", "big-board", 3),
        ("collapsi", "shifting", 2),
        ("collapsi", "players-choice", 2),
        ("collecto", "base", 2),
    ],
)
@pytest.mark.timeout(120)
async def test_a_whole_game_in_the_tui(arena: Any, game: str, variant: str, seats: int) -> None:
    """bob opens the room; ann joins it from the lobby by typing its id, plays by mouse,
    keys and typing; both see the same game over."""
    import asyncio

    await arena.start()
    bob = await arena.client("bob")
    state = await bob.create_room(game, variant=variant, seats=seats if seats > 2 else None, seat=0)
    room = state.room
    others = [bob]
    for i in range(2, seats):
        c = await arena.client(f"cat{i}")
        await c.join(room)
        await c.take_seat(room, i)
        others.append(c)
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(app), "the lobby")
        join = app.screen.query_one("#join", Input)
        join.value = room
        await join.action_submit()
        for c in others:
            await c.ready(room)
        tasks = [
            asyncio.create_task(opponent(c, room, (i,)))
            for i, c in zip([0, *range(2, seats)], others, strict=True)
        ]
        model = await play_my_moves(pilot)
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        assert model.banner and model.banner.startswith("Game")
        over = [e for e in bob.events(room) if e.type == "game_over"][-1]
        assert model.result == over.result
        assert model.you == 1
        assert len([x for x in model.moves if x[0].isdigit()]) == len(
            [e for e in bob.events(room) if e.type == "move_made"]
        )


async def seated_game(arena: Any, pilot: Any, **create: Any) -> tuple[Any, str]:
    """bob opens a Collapsi room, ann (the TUI) joins it from the lobby; the game starts."""
    bob = await arena.client("bob", token="bob-0123456789abcdef")
    room = (await bob.create_room("collapsi", seat=0, **create)).room
    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    join = app.screen.query_one("#join", Input)
    join.value = room
    await join.action_submit()
    await bob.ready(room)
    await until(pilot, lambda: (s := game_screen(app)) and s.model.status == "playing", "start")
    resign = game_screen(app).query_one("#resign")  # type: ignore[union-attr]
    await until(pilot, lambda: not resign.disabled, "the buttons (after the board)")
    return bob, room


async def bob_moves(bob: Any, room: str) -> Any:
    """bob waits for his turn and plays; the move's event."""
    ev = await bob.next(
        type=("game_started", "move_made"), room=room, where=lambda e: e.to_move == 0
    )
    await bob.move(room, ev.legal_moves[0])
    return ev


@pytest.mark.timeout(60)
async def test_resign_before_the_first_move_is_aborted_and_unrated(arena: Any) -> None:
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        bob, room = await seated_game(arena, pilot, rated=True)
        await pilot.click("#resign")
        await pilot.press("y")  # the confirmation
        over = await bob.next(type="game_over", room=room)
        assert over.result.reason == "aborted" and over.ratings == []
        model = game_screen(app).model  # type: ignore[union-attr]
        await until(pilot, lambda: model.banner, "the banner")
        assert model.banner.startswith("Game aborted: no winner, unrated")


@pytest.mark.timeout(60)
async def test_chat_while_the_opponent_thinks_and_a_flag_fall_shown_to_both(arena: Any) -> None:
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        bob, room = await seated_game(arena, pilot, time_control=m.PerMove(ms=5000))
        model = game_screen(app).model  # type: ignore[union-attr]
        await bob_moves(bob, room)
        await until(pilot, lambda: model.my_turn, "ann's turn")
        await type_line(pilot, model.legal[0])
        turn = await bob.next(type="move_made", room=room, where=lambda e: e.to_move == 0)
        await type_line(pilot, "take your time")  # bob to move: chat
        chat = await bob.next(type="chat_message", room=room)
        assert (chat.name, chat.text) == ("ann", "take your time")
        await bob.move(room, turn.legal_moves[0])
        await until(pilot, lambda: model.my_turn, "ann's turn again")
        over = await bob.next(type="game_over", room=room, timeout=10)  # ann never moves
        assert over.result.reason == "timeout" and over.result.winner == 0
        await until(pilot, lambda: model.banner, "the banner")
        assert "wins (timeout)" in model.banner and model.clock.now()[1] == 0
        assert "ann: take your time" in model.chat


@pytest.mark.timeout(90)
async def test_a_killed_socket_reconnects_and_the_game_goes_on(arena: Any) -> None:
    import asyncio

    await arena.start(grace=30)
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        bob, room = await seated_game(arena, pilot)
        model = game_screen(app).model  # type: ignore[union-attr]
        await bob_moves(bob, room)
        await until(pilot, lambda: model.my_turn, "ann's turn")
        app.client.abort()  # the socket dies
        await bob.next(type="player_disconnected", room=room)
        await until(pilot, lambda: app.reconnects == 1, "the reconnect")
        await bob.next(type="player_reconnected", room=room)
        assert model.note.startswith("reconnected")
        task = asyncio.create_task(opponent(bob, room, (0,)))
        await play_my_moves(pilot, clicks=False)
        await asyncio.wait_for(task, 30)
        assert model.result.reason == "no_moves"


@pytest.mark.timeout(60)
async def test_a_spectator_joins_mid_game_from_the_snapshot(arena: Any) -> None:
    await arena.start()
    ann = await arena.client("ann")
    bob = await arena.client("bob")
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room, 1)
    await ann.ready(room)
    await bob.ready(room)
    ev = await ann.next(type="game_started", room=room)
    for _ in range(2):
        await [ann, bob][ev.to_move].move(room, ev.legal_moves[0])
        ev = await ann.next(type="move_made", room=room)
    app = ArenaTui(arena.url, watch=room, config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the game screen")
        model = screen.model
        assert model.spectator and len(model.moves) == 2 and model.spectators == 1
        await [ann, bob][ev.to_move].move(room, ev.legal_moves[0])
        await until(pilot, lambda: len(model.moves) == 3, "the live move")
        assert not model.my_turn and screen.query_one(BoardView).legal == []


async def quick_match_played(arena: Any, pilot: Any, key: str, rated: bool) -> tuple[Any, Any]:
    """ann presses ``key`` in the lobby; once she is queued bob asks for a quick match
    too; both play it to the end. The TUI's model and bob's ``matched``."""
    import asyncio

    app = pilot.app
    await until(pilot, lambda: lobby(app), "the lobby")
    await pilot.press(key)
    bob = await arena.client("bob", token="bob-0123456789abcdef")
    await until(pilot, lambda: any(x.type == "queued" for x in app.client.received), "queue")
    await bob.quick_match("collapsi", rated=rated)
    matched = await bob.next(type="matched", timeout=30)
    task = asyncio.create_task(opponent(bob, matched.room, (matched.seat,)))
    model = await play_my_moves(pilot, clicks=False)
    await asyncio.wait_for(task, 30)
    return model, matched


@pytest.mark.timeout(60)
async def test_quick_match_from_the_lobby(arena: Any) -> None:
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        model, matched = await quick_match_played(arena, pilot, "q", rated=True)
        assert model.you == 1 - matched.seat and model.rated
        assert "->" in model.banner  # the rating change


@pytest.mark.timeout(90)
async def test_an_unrated_quick_match_then_its_record_replayed_from_the_game_over_screen(
    arena: Any,
) -> None:
    """ann holds a token (her q would be rated) and asks for a casual match with u; at the
    end Ctrl+Y steps through the game's record."""
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        model, _matched = await quick_match_played(arena, pilot, "u", rated=False)
        assert not model.rated and model.banner and "->" not in model.banner
        moves = [m for m in model.moves if m[0].isdigit()]
        await pilot.press("ctrl+y")
        screen = await until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen, "the replay"
        )
        assert screen.ply == 0
        await pilot.press("end")
        assert screen.ply == len(moves)


@pytest.mark.timeout(60)
async def test_replay_a_finished_games_record_by_id_and_from_its_file(
    arena: Any, tmp_path: Path
) -> None:
    import asyncio

    await arena.start(data_dir=str(tmp_path))
    ann = await arena.client("ann")
    bob = await arena.client("bob")
    room = (await ann.create_room("collapsi", seat=0)).room
    await bob.join(room)
    await bob.take_seat(room, 1)
    await ann.ready(room)
    await bob.ready(room)
    await asyncio.gather(opponent(ann, room, (0,)), opponent(bob, room, (1,)))
    over = [e for e in ann.events(room) if e.type == "game_over"][-1]
    moves = [e.move for e in ann.events(room) if e.type == "move_made"]
    app = ArenaTui(arena.url, watch=None, name="", config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(app), "the lobby")
        box = app.screen.query_one("#record", Input)
        box.value = over.record
        await box.action_submit()
        screen = await until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen, "replay"
        )
        assert screen.ply == 0
        await pilot.press("right", "right")
        assert screen.ply == 2
        assert screen.query_one(BoardView).last_path[-1] == int(moves[1])
        await pilot.press("end")
        assert screen.ply == len(moves)
    path = next(tmp_path.rglob(f"{over.record}.json"))
    app = ArenaTui(arena.url, record_file=path, config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen, "replay"
        )
        await pilot.press("end", "left")
        assert screen.ply == len(moves) - 1


async def test_sign_in_remembers_name_and_token_per_server_in_a_private_file(
    arena: Any, tmp_path: Path
) -> None:
    await arena.start()
    config = tmp_path / "conf" / "tui.json"
    app = ArenaTui(arena.url, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query("#name"), "the sign-in form")
        app.screen.query_one("#name", Input).value = "ann"
        app.screen.query_one("#token", Input).value = "ann-0123456789abcdef"
        await pilot.click("#signin-go")
        await until(pilot, lambda: lobby(app), "the lobby")
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    saved = json.loads(config.read_text())["servers"][arena.url]
    assert saved == {"name": "ann", "token": "ann-0123456789abcdef"}
    app = ArenaTui(arena.url, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query("#name"), "the sign-in form")
        assert app.screen.query_one("#name", Input).value == "ann"


@pytest.mark.timeout(60)
async def test_abort_then_a_rematch_offered_by_the_opponent_and_accepted_with_ctrl_t(
    arena: Any,
) -> None:
    """Ctrl+B aborts before everyone has moved; after it bob offers a rematch and ann's
    Ctrl+T accepts it: game 2 starts with the seats swapped, in the same screen."""
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        bob, room = await seated_game(arena, pilot)
        model = game_screen(app).model  # type: ignore[union-attr]
        assert model.you == 1
        await pilot.press("ctrl+b")
        over = await bob.next(type="game_over", room=room)
        assert over.result.reason == "aborted"
        await until(pilot, lambda: model.banner, "the banner")
        assert model.banner.startswith("Game aborted")
        await bob.offer_rematch(room)
        await until(pilot, lambda: model.rematch == [0], "bob's offer")
        await pilot.press("ctrl+t")
        started = await bob.next(type="game_started", room=room, where=lambda e: e.game_number == 2)
        await until(pilot, lambda: model.game_number == 2 and model.status == "playing", "game 2")
        assert model.you == 0 and [s.player.name for s in started.seats] == ["ann", "bob"]
        assert model.banner is None and game_screen(app).model is model  # type: ignore[union-attr]


@pytest.mark.timeout(60)
async def test_ctrl_l_leaves_the_room_for_a_lobby_kept_live_meanwhile(arena: Any) -> None:
    """Ctrl+L leaves (Ctrl+Q is Textual's quit); the lobby heard of a room opened while
    ann played, and shows it when she is back (not before: redrawn under the game, it
    cost the game's screen a layout)."""
    await arena.start()
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        bob, room = await seated_game(arena, pilot)
        carl = await arena.client("carl")
        opened = (await carl.create_room("collecto", seat=0)).room
        below = app.screen_stack[-2]
        assert isinstance(below, LobbyScreen)
        await until(pilot, lambda: opened in below.rooms, "the new room, heard under the game")
        # ...and not drawn under it (drawing the lobby laid both screens out: bench/tui.py)
        assert below.stale
        assert opened not in {key.value for key in below.query_one("#rooms", DataTable).rows}
        await pilot.press("ctrl+l")
        await bob.next(type="player_left", room=room)
        await until(pilot, lambda: app.screen is below, "the lobby again")
        assert app.is_running
        rooms = below.query_one("#rooms", DataTable)
        assert opened in {key.value for key in rooms.rows}


@pytest.mark.timeout(60)
async def test_a_private_room_joined_by_its_invite_and_a_dropped_opponents_grace_shown(
    arena: Any,
) -> None:
    """ann types bob's invite code in the lobby's join box and sits down; when bob's
    connection drops, her side panel counts his grace period down."""
    await arena.start(grace=30)
    bob = await arena.client("bob", token="bob-0123456789abcdef")
    state = await bob.create_room("collapsi", seat=0, private=True)
    assert state.invite
    app = await tui(arena)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lobby(app), "the lobby")
        join = app.screen.query_one("#join", Input)
        join.value = state.invite
        await join.action_submit()
        await bob.ready(state.room)
        screen = await until(pilot, lambda: game_screen(app), "the game screen")
        model = screen.model
        await until(pilot, lambda: model.status == "playing", "the start")
        assert model.room == state.room and model.you == 1 and model.invite == state.invite
        bob.abort()  # bob's socket dies
        await until(pilot, lambda: not model.seats[0].connected, "bob disconnected")
        shown = await until(
            pilot, lambda: "disconnected, " in (s := model.seat_lines()[0]) and s, "countdown"
        )
        assert shown.startswith(" bob (red)") or shown.startswith(">bob (red)")
        left = int(shown.split("disconnected, ")[1].split("s")[0])
        assert 0 < left <= 30
