"""Benchmark of the Collapsi solver: CPU time per 4x4 deal from the initial position.

For each rule set, a fixed seeded set of deals (200 by default); for each deal
and each kind of solve (win/loss; the game-length-perfect value; the full
analysis with every root move's value, as ``arena collapsi solve`` prints) a
fresh solver (empty transposition tables) is timed ONCE per mode, never the
best of several runs of one deal:

- ``first``: a first visit with the move tables warmed on OTHER deals (100
  per rule set, analysed). The deal-independent move-table memo is put back to
  its state after that warm-up before every solve, so no solve sees entries
  that its own deal (or an earlier kind on it) added. This is a server, bot or
  survey process that has been running for a while.
- ``cold``: the move tables are built from nothing inside the timed solve (an
  empty memo; the 4x4 torus's shipped tables decompressed): a one-shot
  ``arena collapsi solve`` call, minus the interpreter's start-up.

The two modes alternate deal by deal, so load on the machine falls on both
alike. Times are the process's CPU time. Reported per rule set, solve and
mode: median and 90th percentile over the deals, the positions stored
(median), and beside them the Rust solver's medians (mtorpey/collapsi) measured
side by side on the same 200 deals on the project's dev VM (bench/README.md):
not measured by this script, so the ratio is indicative only.

    .venv/bin/python bench/solver.py [--deals 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.collapsi import solver as solver_mod
from engine.collapsi.position import JACK, Position
from engine.collapsi.solver import Solver, analyse, tables_for

DECK = "JJ11112222333344"
#: Rust (mtorpey/collapsi a5728d2, release build) medians in ms per deal on this project's
#: 2-core dev VM, 2026-11-26: the mean of two side-by-side rounds on these 200 deals per
#: rule set (bench/README.md, "Side by side"). Not measured by this script: the ratio it
#: prints mixes two runs (issue 20 quoted 19.1 / 33.2 / 2.83 / 6.98 from its own machine)
RUST_MEDIAN_MS = {
    ("classic", "win/loss"): 23.7,
    ("classic", "length"): 40.7,
    ("standard", "win/loss"): 4.25,
    ("standard", "length"): 9.1,
}
MODES = ("first", "cold")


def bench_deals(rules: str, n: int, seed: str = "bench-solver") -> list[Position]:
    rng = random.Random(f"{seed}-{rules}")
    out = []
    for _ in range(n):
        cards = list(DECK)
        rng.shuffle(cards)
        values = tuple(JACK if c == "J" else int(c) for c in cards)
        jacks = [i for i, v in enumerate(values) if v == JACK]
        out.append(Position(rules, 4, 4, values, 0, (jacks[0], jacks[1]), 0))
    return out


# -- the solves being timed ---------------------------------------------------------


def solve_win(pos: Position) -> int:
    s = Solver.for_position(pos)
    s.wins(pos.collapsed, pos.pawns[0], pos.pawns[1])
    return len(s.wtt)


def solve_length(pos: Position) -> int:
    s = Solver.for_position(pos)
    s.exact(pos.collapsed, pos.pawns[0], pos.pawns[1])
    return len(s.wtt) + len(s.ltt)


def solve_analysis(pos: Position) -> int:
    return analyse(pos).nodes


KINDS: list[tuple[str, Callable[[Position], int]]] = [
    ("win/loss", solve_win),
    ("length", solve_length),
    ("analysis", solve_analysis),
]


# -- the two modes ------------------------------------------------------------------------


class MemoState:
    """The move-table memo of one rule set as it was after the warm-up, to put back."""

    def __init__(self, rules: str) -> None:
        self.tables = tables_for(4, 4, rules)
        self.saved = [dict(m) for m in self.tables.memo]
        # these copies (and the warm-up's leftovers) are young objects: the garbage
        # collector's pass over them belongs here, not inside the first timed solve
        gc.collect()

    def restore(self) -> None:
        # in place: solvers hold the memo dicts themselves
        for memo, saved in zip(self.tables.memo, self.saved, strict=True):
            memo.clear()
            memo.update(saved)


def time_first(fn: Callable[[Position], int], pos: Position, warm: MemoState) -> tuple:
    warm.restore()
    t0 = time.process_time()
    nodes = fn(pos)
    return (time.process_time() - t0) * 1000, nodes


def time_cold(fn: Callable[[Position], int], pos: Position, warm: MemoState) -> tuple:
    key = (pos.width, pos.height, pos.rules)
    solver_mod._TABLES.pop(key, None)  # built afresh inside the timed solve
    t0 = time.process_time()
    nodes = fn(pos)
    ms = (time.process_time() - t0) * 1000
    solver_mod._TABLES[key] = warm.tables  # back to the warm tables for the next
    return ms, nodes


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--warm-up", type=int, default=100, help="other deals per rule set")
    ap.add_argument("--rules", nargs="*", default=["classic", "standard"])
    ap.add_argument("--json", metavar="PATH", default=None)
    args = ap.parse_args(argv)

    rows = []
    warm_s = {}
    for rules in args.rules:
        t0 = time.process_time()
        for pos in bench_deals(rules, args.warm_up, seed="bench-warm-up"):
            solve_analysis(pos)
        warm_s[rules] = time.process_time() - t0
        warm = MemoState(rules)
        timers = {"first": time_first, "cold": time_cold}
        times: dict[tuple[str, str], list[float]] = {}
        nodes: dict[str, list[int]] = {}
        for pos in bench_deals(rules, args.deals):
            for kind, fn in KINDS:
                for mode in MODES:
                    ms, n = timers[mode](fn, pos, warm)
                    times.setdefault((kind, mode), []).append(ms)
                nodes.setdefault(kind, []).append(n)
        for kind, _ in KINDS:
            rust = RUST_MEDIAN_MS.get((rules, kind))
            for mode in MODES:
                ms = times[(kind, mode)]
                row = {
                    "rules": rules,
                    "solve": kind,
                    "mode": mode,
                    "deals": len(ms),
                    "median_ms": statistics.median(ms),
                    "p90_ms": pct(ms, 0.9),
                    "median_positions": statistics.median(nodes[kind]),
                    "rust_median_ms": rust,
                    "ratio_to_rust": None if rust is None else statistics.median(ms) / rust,
                }
                rows.append(row)
                print(_fmt(row), flush=True)
    _table(rows, args, warm_s)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": rows, "warm_up_s": warm_s, "args": vars(args)}, indent=2)
        )
    return 0


def _fmt(row: dict) -> str:
    return (
        f"  {row['rules']} {row['solve']} {row['mode']}: median {row['median_ms']:.2f} ms,"
        f" p90 {row['p90_ms']:.2f} ms"
    )


def _table(rows: list[dict], args: argparse.Namespace, warm_s: dict[str, float]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency
        for r in rows:
            print(r)
        return
    t = Table(
        title=f"Collapsi solver, 4x4 deals from the start ({args.deals} per rule set, "
        "each deal timed once per mode, CPU ms)"
    )
    for col in (
        "rules",
        "solve",
        "mode",
        "median ms",
        "p90 ms",
        "positions (median)",
        "Rust median ms (dev VM)",
        "median / Rust",
    ):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            r["rules"],
            r["solve"],
            r["mode"],
            f"{r['median_ms']:.2f}",
            f"{r['p90_ms']:.2f}",
            f"{r['median_positions']:.0f}",
            "-" if r["rust_median_ms"] is None else f"{r['rust_median_ms']:.2f}",
            "-" if r["ratio_to_rust"] is None else f"{r['ratio_to_rust']:.2f}",
        )
    Console(width=160).print(t)
    for rules, s in warm_s.items():
        print(f"warm-up ({args.warm_up} other {rules} deals, analysed): {s:.1f} s CPU")


if __name__ == "__main__":
    sys.exit(main())
