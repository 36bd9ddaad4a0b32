"""bench/ladder.py keeps working: paired games through the match authority, scores, intervals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ladder():
    spec = importlib.util.spec_from_file_location("ladder", ROOT / "bench" / "ladder.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ladder"] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("ladder", None)


def test_paired_games_swap_sides_and_score_both(ladder, monkeypatch):
    monkeypatch.setitem(ladder.LADDERS, "collapsi", [("random", None), ("perfect", 20)])
    rows = ladder.run("collapsi", "standard", deals=3, seed=2, jobs=1)
    (row,) = rows
    assert row["games"] == 6 and row["wins"] + row["draws"] + row["losses"] == 6
    # the perfect player never loses a deal on both sides: every pair scores at least 1/2
    assert row["score"] >= 0.5
    lo, hi = row["ci95"]
    assert 0.0 <= lo <= row["score"] <= hi <= 1.0
    a, b, plies = ladder.play_pair(
        ladder.Rung("collapsi", "standard", ("perfect", 20), ("random", None)), 0, 2
    )
    assert {a, b} <= {0.0, 0.5, 1.0} and a + b >= 1.0 and plies > 0


def test_interval(ladder):
    assert ladder.interval([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    mean, lo, hi = ladder.interval([0.0, 1.0, 0.5, 0.5])
    assert mean == 0.5 and lo < 0.5 < hi


def test_a_three_player_rung_rotates_the_upper_level_and_is_deterministic(ladder, monkeypatch):
    """Issue 20: rungs on every board; the same seed gives the same games, move for move."""
    monkeypatch.setitem(ladder.LADDERS, "collapsi-big-board-3", [("mcts", 10), ("strong", 60)])

    def rows():
        out = ladder.run("collapsi-big-board-3", "standard", deals=2, seed=4, jobs=1)
        return [{k: v for k, v in r.items() if k != "seconds"} for r in out]

    first = rows()
    (row,) = first
    assert row["games"] == 6 and row["board"] == "collapsi (standard; big-board, 3 players)"
    assert row["wins"] + row["draws"] + row["losses"] == 6
    assert rows() == first
    rung = ladder.Rung("collapsi", "standard", ("strong", 60), ("mcts", 10), ladder.BOARDS[
        "collapsi-big-board-3"])  # fmt: skip
    *scores, plies = ladder.play_pair(rung, 0, 4)
    assert len(scores) == 3 and set(scores) <= {0.0, 0.5, 1.0} and plies > 0
    assert ladder.play_pair(rung, 0, 4) == (*scores, plies)
    assert ladder.play_pair(rung, 0, 5) != (*scores, plies)
