"""``arena tui`` without a server, driven by Textual's pilot: against engine bots, and
``--puzzle``, a Solo puzzle (ruling 7) through the one-seat :class:`engine.match.Match`;
the command line as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clients.tui.app import ArenaTui
from clients.tui.board import BoardView
from clients.tui.lines import LinesWidget
from clients.tui.local import OfflinePuzzle
from engine.collapsi.solo import generate
from tests.tui_pilot import SIZE, drawn, game_screen, play_my_moves, type_line, until


def puzzle_app(size: int, difficulty: str, seed: int = 0) -> ArenaTui:
    return ArenaTui("ws://127.0.0.1:9", puzzle=(size, difficulty, seed), config=Path(os.devnull))


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("size", "difficulty"), [(3, "hard"), (4, "medium")])
async def test_a_puzzle_solved_by_its_winning_line(size: int, difficulty: str) -> None:
    """The deal is the generator's for (size, difficulty, seed); its winning line, played
    the first move by a click and the rest typed, solves it."""
    expected = generate(size, difficulty, 3)
    app = puzzle_app(size, difficulty, 3)
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the puzzle")
        model = screen.model
        assert isinstance(screen.actions, OfflinePuzzle)
        assert model.view is not None and "".join(model.view["cards"]) == expected.deal
        info = drawn(screen, "#info")
        assert f"Solo puzzle {size}x{size}, difficulty {difficulty}" in info
        assert "spectators" not in info
        board = screen.query_one(BoardView)
        assert "exit" in str(board.render())
        first, *rest = expected.solution
        cell = int(first)
        col, row = cell % size, cell // size
        await pilot.click(BoardView, offset=(3 + 7 * col + 2, 1 + 3 * row + 1))
        await until(pilot, lambda: len(model.moves) == 1, "the clicked move")
        for move in rest:
            await type_line(pilot, move)
        await until(pilot, lambda: model.status == "finished", "the end")
        assert model.result.reason == "solved" and model.result.winner == 0
        assert model.banner == f"Puzzle solved in {len(expected.solution)} moves"


@pytest.mark.timeout(60)
async def test_a_failed_puzzle_says_so_and_starts_again() -> None:
    """Stepping onto the exit before every card is collapsed fails the puzzle (ruling 7);
    Ctrl+T deals the same puzzle again from the start."""
    app = puzzle_app(3, "easy")
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the puzzle")
        model = screen.model
        start = dict(model.view or {})
        exit_cell = str(start["exit"])
        assert exit_cell in model.legal  # a door, open too early
        await type_line(pilot, exit_cell)
        await until(pilot, lambda: model.status == "finished", "the end")
        assert model.result.reason == "failed" and model.result.winner is None
        assert model.banner.startswith("Puzzle not solved (failed)")
        await pilot.press("ctrl+t")
        await until(pilot, lambda: model.status == "playing", "a new try")
        assert model.banner is None and model.moves == []
        assert model.view == start and model.my_turn


def test_the_puzzle_options_are_checked_on_the_command_line() -> None:
    """``arena tui --puzzle 5`` is refused before any screen opens (a real subprocess)."""
    out = subprocess.run(
        [sys.executable, "-m", "clients.cli", "tui", "--puzzle", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "--puzzle: invalid choice: 5" in out.stderr


@pytest.mark.timeout(60)
async def test_offline_against_an_engine_bot_to_the_end() -> None:
    app = ArenaTui(
        "ws://127.0.0.1:9", offline=("collapsi", "random", None), config=Path(os.devnull)
    )
    async with app.run_test(size=SIZE) as pilot:
        model = await play_my_moves(pilot)
        assert model.banner.startswith("Game over:")
        assert model.result.winner in (0, 1)


@pytest.mark.parametrize("game", ["collapsi", "collecto"])
@pytest.mark.timeout(60)
async def test_the_rows_a_move_redraws_leave_the_screen_as_drawn_anew(game: str) -> None:
    """The board and the side panel repaint only the rows a move changed
    (clients/tui/lines.py): after some moves the screen is the same as when every one of
    them is drawn again from scratch."""
    app = ArenaTui("ws://127.0.0.1:9", offline=(game, "random", None), config=Path(os.devnull))
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the game")
        model = screen.model
        for _ in range(3):
            await until(pilot, lambda: model.my_turn or model.status == "finished", "my turn")
            if model.status == "finished":
                break
            before = len(model.moves)
            await type_line(pilot, model.legal[0])
            await until(pilot, lambda b=before: len(model.moves) > b + 1 or model.banner, "reply")
        await pilot.pause()
        assert len(model.moves) >= 2
        kept = app.export_screenshot()
        for widget in screen.query(LinesWidget):
            widget.refresh()
        await pilot.pause()
        assert app.export_screenshot() == kept


@pytest.mark.timeout(60)
async def test_big_board_against_three_bots_to_the_end() -> None:
    app = ArenaTui(
        "ws://127.0.0.1:9",
        offline=("collapsi", "random", "big-board"),
        players=4,
        config=Path(os.devnull),
    )
    async with app.run_test(size=SIZE) as pilot:
        model = await play_my_moves(pilot, clicks=False)
        assert [s.label for s in model.seats] == ["red", "blue", "green", "yellow"]
        assert model.result.winner in (0, 1, 2, 3)
        assert {int(x.split(". ")[0]) for x in model.moves} == set(range(1, len(model.moves) + 1))


async def test_chat_is_shown_as_typed_not_as_markup() -> None:
    """Square brackets are Rich markup; chat (and names, errors) must not be read as it:
    ``[/x]`` would raise and end the client."""
    app = ArenaTui(
        "ws://127.0.0.1:9", offline=("collapsi", "random", None), config=Path(os.devnull)
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the game")
        await type_line(pilot, "[/x] gl [bold]hf")
        await pilot.pause()
        assert drawn(screen, "#chat") == "you: [/x] gl [bold]hf"


@pytest.mark.timeout(60)
async def test_collecto_shows_each_players_balls_and_points() -> None:
    app = ArenaTui(
        "ws://127.0.0.1:9", offline=("collecto", "random", None), config=Path(os.devnull)
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: game_screen(app), "the game")
        model = screen.model
        await type_line(pilot, model.legal[0])
        await until(pilot, lambda: len(model.moves) >= 2 or model.status == "finished", "moves")
        view = model.view
        assert view is not None and sum(view["balls"]) > 0  # a move always collects
        shown = str(screen.query_one(BoardView).render())
        for label, points, balls in zip(view["seats"], view["scores"], view["balls"], strict=True):
            line = next(x for x in shown.splitlines() if x.startswith(label))
            assert line.endswith(f"{points} points ({balls} balls)")
            letters = sum(
                int(part[1:])
                for part in line.split()[1:]
                if part[:1].isalpha() and part[1:].isdigit()
            )
            assert letters == balls
