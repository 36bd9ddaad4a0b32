"""``arena collapsi deal|moves`` through a real subprocess: the command-line contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena_process import ROOT, run_arena

DEAL = "41J124313J322123"


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return run_arena(*args, timeout=60)


def test_deal_is_reproducible_and_16_cards() -> None:
    a = arena("collapsi", "deal", "--seed", "7")
    b = arena("collapsi", "deal", "--seed", "7")
    c = arena("collapsi", "deal", "--seed", "8")
    assert a.returncode == 0, a.stderr
    deal = a.stdout.strip()
    assert deal == b.stdout.strip() != c.stdout.strip()
    assert len(deal) == 16 and sorted(deal) == sorted("JJ11112222333344")


def test_ruling_9_big_board_deal_is_36_chars() -> None:
    out = arena("collapsi", "deal", "--seed", "1", "--variant", "big-board")
    assert out.returncode == 0, out.stderr
    deal = out.stdout.strip()
    assert len(deal) == 36 and deal.count("J") == 4


def test_moves_json_contract() -> None:
    out = arena("collapsi", "moves", "--rules", "standard", "--deal", DEAL, "--json")
    assert out.returncode == 0, out.stderr
    # red on cell 2 (first J) moves one step on the torus: 1, 3, 6 and 14 (wrapping up)
    assert json.loads(out.stdout) == {"to_move": "red", "moves": [1, 3, 6, 14], "game_over": False}
    out = arena(
        "collapsi", "moves", "--rules", "standard", "--deal", DEAL, "--moves", "14", "--json"
    )
    assert json.loads(out.stdout) == {
        "to_move": "blue",
        "moves": [5, 8, 10, 13],
        "game_over": False,
    }


def test_moves_json_game_over() -> None:
    moves = "14,13,1,12,5,4,8,6,3,7,0,11"
    out = arena(
        "collapsi", "moves", "--rules", "standard", "--deal", DEAL, "--moves", moves, "--json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"to_move": "red", "moves": [], "game_over": True}


def test_classic_joker_moves_one_to_four() -> None:
    out = arena("collapsi", "moves", "--rules", "classic", "--deal", DEAL, "--json")
    data = json.loads(out.stdout)
    assert data["moves"] == [0, 1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15]


def test_bad_input_is_one_line_error_without_traceback() -> None:
    cases = [
        ("--deal", "41J124313J32212J"),  # three jacks: wrong cards
        ("--deal", "41J12431"),  # wrong length
        ("--deal", DEAL, "--moves", "14,13,2"),  # cell 2 collapsed by then
        ("--deal", DEAL, "--moves", "14,x"),  # not a cell
        ("--deal", DEAL, "--rules", "nope"),
        ("--deal", DEAL, "--moves", "14,,13"),  # an empty move
        ("--deal", DEAL.replace("J", "j"), "--moves", "14"),  # j is a collapsed jack
        ("--deal", DEAL, "--players", "3"),
    ]
    for extra in cases:
        out = arena("collapsi", "moves", *extra)
        assert out.returncode == 2, extra
        assert out.stdout == "" and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert out.stderr.startswith("arena collapsi: error: "), out.stderr


def test_demo_plays_a_seeded_game_to_the_end() -> None:
    a = arena("demo", "--seed", "3")
    assert a.returncode == 0, a.stderr
    assert "Mark S. Ball" in a.stdout
    last = a.stdout.strip().splitlines()[-1]
    assert last.startswith("result: ") and " wins after " in last
    assert a.stdout == arena("demo", "--seed", "3").stdout  # deterministic
    four = arena("demo", "--variant", "big-board", "--players", "4", "--quiet", "--seed", "2")
    assert four.returncode == 0, four.stderr
    assert four.stdout.startswith("result: ") and four.stdout.count(",") == 3


def test_readme_demo_command_runs() -> None:
    exe = ROOT / ".venv" / "bin" / "arena"
    if not exe.exists():  # the README's install line makes it; CI always has it
        exe = Path(sys.executable).parent / "arena"
    out = subprocess.run([str(exe), "demo"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "result: " in out.stdout


def test_moves_on_a_big_board_deal() -> None:
    deal = arena("collapsi", "deal", "--seed", "4", "--variant", "big-board").stdout.strip()
    out = arena("collapsi", "moves", "--rules", "standard", "--deal", deal, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    red = deal.index("J")
    r, c = divmod(red, 6)
    steps = {r * 6 + (c + 1) % 6, r * 6 + (c - 1) % 6, (r + 1) % 6 * 6 + c, (r - 1) % 6 * 6 + c}
    # blue's jack is occupied and the two unused jacks are face down (ruling 4)
    jacks = {i for i, ch in enumerate(deal) if ch == "J"}
    assert data == {"to_move": "red", "moves": sorted(steps - jacks), "game_over": False}
