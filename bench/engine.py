"""Engine speed: random playouts and legal-move generations per second.

Run: ``.venv/bin/python bench/engine.py [--seconds S] [--json PATH]``.
Rates are per second of this process's CPU time, i.e. on one core, so they
hold on a busy machine too. Each row is one benchmark; add rows to :data:`BENCHMARKS` (name, unit,
function returning (operations, seconds)). Results are printed as a table
and, with ``--json``, written as a list of {name, unit, ops, seconds, rate}.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.collecto_rows import COLLECTO_BENCHMARKS
from bench.cpu_timing import timed_batches
from engine.collapsi import CollapsiGame


def collapsi_playouts(variant: str, rules: str, seconds: float) -> tuple[int, float]:
    """Complete random games from fresh seeded deals, through the bot API."""
    rnd = random.Random(1).random
    starts = [CollapsiGame.new(rules=rules, variant=variant, seed=s) for s in range(64)]

    def batch() -> int:
        for start in starts:
            g = start.copy()
            while g._result is None:
                cells = g.legal_cells()
                g.play_cell(cells[int(rnd() * len(cells))])
        return len(starts)

    return timed_batches(batch, seconds)


def collapsi_movegen(variant: str, rules: str, seconds: float) -> tuple[int, float]:
    """Legal-move generations on positions sampled from random games."""
    rng = random.Random(2)
    games = []
    for s in range(32):
        g = CollapsiGame.new(rules=rules, variant=variant, seed=s)
        while g._result is None:
            games.append(g.copy())
            cells = g.legal_cells()
            g.play_cell(cells[rng.randrange(len(cells))])

    def batch() -> int:
        for g in games:
            g._gen(g._turn)
        return len(games)

    return timed_batches(batch, seconds)


def collapsi_naive_playouts(rules: str, seconds: float) -> tuple[int, float]:
    """Baseline: the same random games with a nested-list board and path recursion."""
    rnd = random.Random(1).random
    deals = [CollapsiGame.new(rules=rules, seed=s).setup() for s in range(64)]

    def dests(grid, collapsed, pawns, mover):
        start = pawns[mover]
        card = grid[start[0]][start[1]]
        lengths = ([1, 2, 3, 4] if rules == "classic" else [1]) if card == "J" else [int(card)]
        found = set()

        def walk(path, left):
            if left == 0:
                if path[-1] not in pawns:
                    found.add(path[-1])
                return
            r, c = path[-1]
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                nxt = ((r + dr) % 4, (c + dc) % 4)
                if nxt not in path and nxt not in collapsed:
                    walk([*path, nxt], left - 1)

        for n in lengths:
            walk([start], n)
        return sorted(found)

    def batch() -> int:
        for deal in deals:
            grid = [list(deal[r * 4 : r * 4 + 4]) for r in range(4)]
            jacks = [(r, c) for r in range(4) for c in range(4) if grid[r][c] == "J"]
            pawns, collapsed, mover = list(jacks), set(), 0
            while True:
                options = dests(grid, collapsed, pawns, mover)
                if not options:
                    break
                collapsed.add(pawns[mover])
                pawns[mover] = options[int(rnd() * len(options))]
                mover = 1 - mover
        return len(deals)

    return timed_batches(batch, seconds)


#: (name, unit, runner(seconds) -> (ops, seconds))
BENCHMARKS: list[tuple[str, str, Callable[[float], tuple[int, float]]]] = [
    (
        "collapsi 4x4 random playouts (standard)",
        "games/s",
        lambda s: collapsi_playouts("base", "standard", s),
    ),
    (
        "collapsi 4x4 random playouts (classic)",
        "games/s",
        lambda s: collapsi_playouts("base", "classic", s),
    ),
    (
        "collapsi 4x4 random playouts, naive baseline",
        "games/s",
        lambda s: collapsi_naive_playouts("standard", s),
    ),
    (
        "collapsi 6x6 random playouts (standard, 2p)",
        "games/s",
        lambda s: collapsi_playouts("big-board", "standard", s),
    ),
    (
        "collapsi 4x4 legal-move generation",
        "gens/s",
        lambda s: collapsi_movegen("base", "standard", s),
    ),
    (
        "collapsi 6x6 legal-move generation",
        "gens/s",
        lambda s: collapsi_movegen("big-board", "standard", s),
    ),
    *COLLECTO_BENCHMARKS,
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per benchmark")
    parser.add_argument("--only", default="", help="run only rows whose name contains this")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    rows = []
    print(f"python {platform.python_version()} on {platform.machine()}, per CPU second (one core)")
    print(f"{'benchmark':<48} {'rate':>12}  unit")
    for name, unit, runner in BENCHMARKS:
        if args.only and args.only not in name:
            continue
        ops, secs = runner(args.seconds)
        rate = ops / secs
        rows.append({"name": name, "unit": unit, "ops": ops, "seconds": secs, "rate": rate})
        print(f"{name:<48} {rate:>12,.0f}  {unit}", flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
