"""``arena collapsi deal|moves`` through a real subprocess: the command-line contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEAL = "41J124313J322123"


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


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
    ]
    for extra in cases:
        out = arena("collapsi", "moves", *extra)
        assert out.returncode != 0, extra
        assert "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
