"""Collecto rows for ``bench/engine.py``: legal-move listing, deals, random playouts.

Positions are sampled from seeded random games, so every run measures the
same boards. Listing is timed per position (median and 90th percentile) for
positions with single moves and for those that need the 784-pair double
search (ruling 13), against a baseline in this file that checks the whole
board for pairs after every push instead of only the pushed line. Times are
this process's CPU time (one core), as in ``bench/engine.py``.

Run alone: ``.venv/bin/python bench/collecto_rows.py [--games N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cpu_timing import timed_batches
from engine.collecto import CollectoGame
from engine.collecto import board as B
from engine.collecto.deal import deal

#: issue 3: listing legal moves under 1 ms median on one core
LISTING_TARGET_US = 1000.0


def naive_legal(board: B.Board) -> tuple[list[int], list[tuple[int, int]]]:
    """Baseline: the same rules, with a full-board pair scan after every push."""

    def paired(b: B.Board) -> bool:
        return any(b[c] and any(b[n] == b[c] for n in B.NEIGHBOURS[c]) for c in range(B.CELLS))

    singles = []
    for m in range(B.MOVES):
        after = board.copy()
        if B.push(after, m) and paired(after):
            singles.append(m)
    if singles:
        return singles, []
    doubles = []
    for a in range(B.MOVES):
        first = board.copy()
        if not B.push(first, a):
            continue
        for b in range(B.MOVES):
            second = first.copy()
            if B.push(second, b) and paired(second):
                doubles.append((a, b))
    return singles, doubles


def sample_positions(games: int, seed: int = 1) -> tuple[list[B.Board], list[B.Board]]:
    """(boards with a single move, boards that need doubles) from seeded random games."""
    rng = random.Random(seed)
    singles, doubles = [], []
    for s in range(games):
        game = CollectoGame.new(seed=s)
        while not game.is_over():
            board = B.parse_board(game.position())
            (singles if game.legal_codes()[0] else doubles).append(board)
            game.play(rng.choice(game.legal_moves()))
    return singles, doubles


def _time_each(fn: Any, boards: list[B.Board]) -> list[float]:
    out = []
    for board in boards:
        t0 = time.process_time()
        fn(board)
        out.append(time.process_time() - t0)
    return out


def _row(name: str, times: list[float], base: list[float] | None = None) -> dict[str, Any]:
    times = sorted(times)
    row = {
        "name": name,
        "n": len(times),
        "median_us": round(statistics.median(times) * 1e6, 1),
        "p90_us": round(times[int(0.9 * (len(times) - 1))] * 1e6, 1),
    }
    if base is not None:
        row["target_us"] = LISTING_TARGET_US
        row["speedup_vs_baseline"] = round(statistics.median(base) / statistics.median(times), 1)
    return row


def collecto_rows(games: int = 200, playout_seconds: float = 2.0) -> list[dict[str, Any]]:
    """The Collecto benchmark rows; each a dict with a ``name`` and its figures."""
    with_single, need_double = sample_positions(games)
    every = with_single + need_double
    rows = [
        _row(
            "collecto legal moves, all positions",
            _time_each(B.legal_moves, every),
            _time_each(naive_legal, every),
        ),
        _row(
            "collecto legal moves, single exists (28 pushes)",
            _time_each(B.legal_moves, with_single),
            _time_each(naive_legal, with_single),
        ),
        _row(
            "collecto legal moves, doubles needed (784 pairs)",
            _time_each(B.legal_moves, need_double),
            _time_each(naive_legal, need_double),
        ),
        _row("collecto deal from a seed", _time_each(deal, list(range(2000)))),
    ]
    rng = random.Random(7)
    played = moves = 0
    t0 = time.process_time()
    while time.process_time() - t0 < playout_seconds:
        game = CollectoGame.new(seed=played)
        while not game.is_over():
            game.play(rng.choice(game.legal_moves()))
            moves += 1
        played += 1
    elapsed = time.process_time() - t0
    rows.append(
        {
            "name": "collecto random playouts (deal + play to the end)",
            "n": played,
            "playouts_per_s": round(played / elapsed, 1),
            "moves_per_s": round(moves / elapsed),
        }
    )
    return rows


# -- rows in bench/engine.py's form: runner(seconds) -> (operations, seconds) ------------
def collecto_listing(kind: str, seconds: float, lister: Any = None) -> tuple[int, float]:
    """Full legal-move listings on sampled positions: ``all``, ``single`` or ``double``.

    ``lister`` defaults to the engine's; :func:`naive_legal` gives the baseline row.
    """
    lister = lister or B.legal_moves
    with_single, need_double = sample_positions(60)
    boards = {"all": with_single + need_double, "single": with_single, "double": need_double}[kind]

    def batch() -> int:
        for board in boards:
            lister(board)
        return len(boards)

    return timed_batches(batch, seconds)


def collecto_playouts(seconds: float) -> tuple[int, float]:
    """Complete random games through the Game API from 64 seeded deals (deal time excluded)."""
    rnd = random.Random(1).random
    starts = [CollectoGame.new(seed=s) for s in range(64)]

    def batch() -> int:
        for start in starts:
            game = start.copy()
            while not game.is_over():
                moves = game.legal_moves()
                game.play(moves[int(rnd() * len(moves))])
        return len(starts)

    return timed_batches(batch, seconds)


#: (name, unit, runner(seconds) -> (ops, seconds)), as in bench/engine.py's BENCHMARKS
COLLECTO_BENCHMARKS: list[tuple[str, str, Any]] = [
    ("collecto random playouts", "games/s", collecto_playouts),
    (
        "collecto legal-move listing (all positions)",
        "lists/s",
        lambda s: collecto_listing("all", s),
    ),
    (
        "collecto listing (all), full-scan baseline",
        "lists/s",
        lambda s: collecto_listing("all", s, naive_legal),
    ),
    (
        "collecto legal-move listing (784 doubles)",
        "lists/s",
        lambda s: collecto_listing("double", s),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="random games to sample from")
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent on playouts")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args()
    rows = collecto_rows(args.games, args.seconds)
    for row in rows:
        figures = ", ".join(f"{k}={v}" for k, v in row.items() if k != "name")
        print(f"{row['name']:<52} {figures}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
