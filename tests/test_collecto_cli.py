"""``arena collecto``: the command-line contract of issue 3, through the real command."""

from __future__ import annotations

import json
import subprocess

import pytest
from arena_process import run_arena

from clients.cli import main
from engine.collecto import board as B
from engine.collecto.deal import deal

# Row 0: B. Row 1: . . B . Y . R. Row 2: . . R -> row 1 left takes 2 blue and 2 red.
TWO_GROUPS = "1000000" + "0010203" + "0030000" + "0" * 28
# Blue at (0,0) and (2,2): only double moves join them.
DOUBLES_ONLY = "1000000" + "0000000" + "0010000" + "0" * 28
# One ball of each colour: no move at all.
NO_MOVE = "1020300" + "0" * 7 + "4000005" + "0" * 7 + "0006000" + "0" * 14


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return run_arena("collecto", *args, timeout=60)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> object:
    assert main(["collecto", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_deal_prints_the_seeded_board_through_the_real_command() -> None:
    proc = arena("deal", "--seed", "42")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == B.format_board(deal(42))
    again = arena("deal", "--seed", "42")
    assert again.stdout == proc.stdout
    assert arena("deal", "--seed", "43").stdout != proc.stdout


def test_moves_json_lists_singles_and_no_doubles(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "moves", "--board", TWO_GROUPS, "--json")
    assert data == {"single": [1, 9], "double": [], "game_over": False}
    board = B.format_board(deal(3))
    data = run_json(capsys, "moves", "--board", board, "--json")
    assert data["single"] == B.valid_singles(deal(3)) and data["double"] == []


def test_moves_json_lists_doubles_when_no_single_exists(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "moves", "--board", DOUBLES_ONLY, "--json")
    assert list(data) == ["single", "double", "game_over"]
    assert data["single"] == [] and data["game_over"] is False
    assert [16, 0] in data["double"]
    assert all(isinstance(d, list) and len(d) == 2 for d in data["double"])


def test_moves_json_reports_game_over(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "moves", "--board", NO_MOVE, "--json")
    assert data == {"single": [], "double": [], "game_over": True}


def test_apply_json_gives_board_and_collected(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "apply", "--board", TWO_GROUPS, "--move", "1", "--json")
    assert data == {"board": "0" * 7 + "0200000" + "0" * 35, "collected": {"1": 2, "3": 2}}
    data = run_json(capsys, "apply", "--board", DOUBLES_ONLY, "--move", "16,0", "--json")
    assert data == {"board": "0" * 49, "collected": {"1": 2}}


def test_apply_through_the_real_command_matches_the_engine() -> None:
    board = deal(11)
    move = B.valid_singles(board)[0]
    proc = arena("apply", "--board", B.format_board(board), "--move", str(move), "--json")
    assert proc.returncode == 0, proc.stderr
    after, counts = B.apply_move(board, (move,))
    assert json.loads(proc.stdout)["board"] == B.format_board(after)
    assert sum(json.loads(proc.stdout)["collected"].values()) == sum(counts) >= 2


@pytest.mark.parametrize(
    ("board", "move", "why"),
    [
        (TWO_GROUPS, "8", "leaves no two same-coloured"),  # no pair made
        (TWO_GROUPS, "9,1", "while a single move exists"),  # double with a single available
        (TWO_GROUPS, "0", "changes nothing"),  # row 0 is already packed left
        (DOUBLES_ONLY, "16", "leaves no two same-coloured"),
        (NO_MOVE, "6", "changes nothing"),  # row 6 is empty
        (NO_MOVE, "0", "leaves no two same-coloured"),
        (TWO_GROUPS, "28", "pushes are 0-27"),
        (TWO_GROUPS, "up", "a Collecto move"),
        ("12", "1", "49 digits"),
        ("11" + "0" * 47, "1", "touching"),
    ],
)
def test_invalid_input_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], board: str, move: str, why: str
) -> None:
    assert main(["collecto", "apply", "--board", board, "--move", move, "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and why in lines[0] and lines[0].startswith("arena collecto: error:")


def test_invalid_move_through_the_real_command_exits_non_zero() -> None:
    proc = arena("apply", "--board", TWO_GROUPS, "--move", "9,1")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
