"""``arena collapsi solve|survey`` through a real subprocess, and the solver against the engine."""

from __future__ import annotations

import json
import random
from pathlib import Path

from arena_process import run_arena as arena

from clients.cli.collapsi_solver_cmd import summarise, survey_deals, wilson
from engine.collapsi import CollapsiGame
from engine.collapsi.solver import legal_destinations, solve_length
from tests.test_solver import naive_move_values, naive_solve

DEAL = "J123412341231J23"


def test_solve_json_contract_matches_naive_minimax() -> None:
    for rules, moves in (("standard", "1,9,2,8,7"), ("classic", "15,1,3,2,8,5")):
        out = arena(
            "collapsi", "solve", "--rules", rules, "--deal", DEAL, "--moves", moves, "--json"
        )
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        assert list(answer) == ["to_move", "winner", "plies", "moves"]
        game = CollapsiGame.from_setup(DEAL, rules=rules)
        for m in moves.split(","):
            game.play(m)
        pos = game.to_position()
        wins, plies = naive_solve(pos)
        seats = ("red", "blue")
        assert answer["to_move"] == seats[pos.to_move]
        assert answer["winner"] == seats[pos.to_move if wins else 1 - pos.to_move]
        assert answer["plies"] == plies
        assert answer["moves"] == {str(c): p for c, p in naive_move_values(pos).items()}


def test_solve_from_the_deal_and_after_the_end() -> None:
    out = arena("collapsi", "solve", "--deal", DEAL, "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["to_move"] == "red"
    assert min(answer["moves"].values()) >= 1
    best = [p for p in answer["moves"].values() if (p % 2 == 1) == (answer["winner"] == "red")]
    assert answer["plies"] == (min(best) if answer["winner"] == "red" else max(best))
    # play the game out along best moves to its end: then 0 plies, no moves
    moves: list[str] = []
    answer_now = answer
    while answer_now["moves"]:
        target = answer_now["plies"]
        cell = next(c for c, p in answer_now["moves"].items() if p == target)
        moves.append(cell)
        out = arena("collapsi", "solve", "--deal", DEAL, "--moves", ",".join(moves), "--json")
        assert out.returncode == 0, out.stderr
        answer_now = json.loads(out.stdout)
        assert answer_now["plies"] == target - 1
        assert answer_now["winner"] == answer["winner"]
    assert len(moves) == answer["plies"]
    assert answer_now["moves"] == {} and answer_now["plies"] == 0
    assert answer_now["winner"] != answer_now["to_move"]


def test_solve_takes_every_board_size_and_says_when_one_is_too_large() -> None:
    # a custom 3x3 board, from its deal and from a position string: the naive minimax agrees
    for setup, rules in (("JJ1112223", "standard"), ("JJ1/112/223 0,1 0", "classic")):
        out = arena("collapsi", "solve", "--rules", rules, "--deal", setup, "--json")
        assert out.returncode == 0, out.stderr
        pos = CollapsiGame.from_setup(setup, rules=rules, variant="custom").to_position()
        wins, plies = naive_solve(pos)
        assert json.loads(out.stdout) == {
            "to_move": "red",
            "winner": "red" if wins else "blue",
            "plies": plies,
            "moves": {str(c): p for c, p in sorted(naive_move_values(pos).items())},
        }
    # a two-player Big Board deal (6x6) is not solved in a second: the command says so
    big = CollapsiGame.new(variant="big-board", players=2, seed=3).setup()
    out = arena("collapsi", "solve", "--deal", big, "--max-seconds", "0.5", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert "too large to solve exhaustively" in out.stderr, out.stderr


def test_solve_bad_input_is_one_line_exit_2() -> None:
    for args in (
        ("--deal", "J1234"),
        ("--deal", DEAL, "--moves", "1,99"),
        ("--deal", DEAL, "--rules", "modern"),
        ("--deal", DEAL, "--moves", "5"),
        ("--deal", DEAL, "--moves", "1,,9"),
    ):
        out = arena("collapsi", "solve", *args, "--json")
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert out.stdout == ""
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_survey_with_processes_agrees_with_solving_in_process(tmp_path: Path) -> None:
    path = tmp_path / "survey.json"
    out = arena(
        "collapsi",
        "survey",
        "--rules",
        "classic",
        "--deals",
        "24",
        "--seed",
        "5",
        "--jobs",
        "2",
        "--json",
        str(path),
        "--no-progress",
    )
    assert out.returncode == 0, out.stderr
    assert "paper" in out.stdout and "Wilson" in out.stdout
    got = json.loads(path.read_text())
    deals = survey_deals(24, 5)
    assert deals == survey_deals(24, 5) != survey_deals(24, 6)
    expected = summarise(
        "classic",
        [solve_length(CollapsiGame.from_setup(d, rules="classic").to_position()) for d in deals],
    )
    for key in ("deals", "red_wins", "red_share", "lengths"):
        assert got[key] == expected[key]
    assert sum(got["lengths"].values()) == 24


def test_wilson_interval() -> None:
    lo, hi = wilson(375, 1000)
    assert 0.345 < lo < 0.346 and 0.405 < hi < 0.406
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] > 1 - 1e-9
    assert 0.277 < wilson(0, 10)[1] < 0.278


def test_solver_moves_equal_engine_moves_on_random_positions() -> None:
    rng = random.Random(11)
    checked = 0
    for i in range(120):
        rules = "classic" if i % 2 else "standard"
        game = CollapsiGame.new(rules=rules, seed=rng.randrange(10**6))
        for _ in range(rng.randrange(0, 12)):
            cells = game.legal_cells()
            if not cells or game.is_over():
                break
            game.play_cell(rng.choice(list(cells)))
        if game.is_over():
            continue
        pos = game.to_position()
        assert sorted(game.legal_cells()) == sorted(legal_destinations(pos))
        checked += 1
    assert checked > 60
