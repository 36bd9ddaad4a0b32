"""Benchmark of the Collapsi solver: time per 4x4 deal from the initial position.

For each rule set, a fixed seeded set of 200 deals; for each deal and each
kind of solve (win/loss; game-length-perfect value; full analysis with every
root move's value, as ``arena collapsi solve`` prints) a fresh solver (empty
transposition tables) is timed. Move tables are deal-independent and are
filled once per process by a warm-up pass over other deals (``--cold``
clears their memo before every deal instead). Times are process CPU time,
the best of ``--repeat`` runs per deal, so other load on the machine does not
inflate them. Reported: median and 90th percentile, the positions stored,
and the targets (the published Rust alpha-beta, median per deal).

A baseline in the same run: plain negamax over the same move tables, no
transposition table, no ordering (win/loss stops at the first winning move;
length uses alpha-beta), like the Rust solver, on the first ``--baseline``
deals; the speed-up is the ratio of medians on those deals.

    .venv/bin/python bench/solver.py [--deals 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.collapsi.position import JACK, Position
from engine.collapsi.solver import Solver, analyse, tables_for

DECK = "JJ11112222333344"
#: median ms per deal of the published Rust alpha-beta (issue 4)
TARGETS = {
    ("classic", "win/loss"): 17.0,
    ("classic", "length"): 29.0,
    ("standard", "win/loss"): 2.6,
    ("standard", "length"): 6.3,
}


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


# -- the baseline: plain negamax, no table, no ordering -------------------------------


def _plain_moves(pos: Position) -> Callable[[int, int, int], list[int]]:
    t = tables_for(pos.width, pos.height, pos.rules)
    cards = pos.cards

    def moves(col: int, me: int, opp: int) -> list[int]:
        return [d for d in t.dests(me, cards[me], col) if d != opp]

    return moves


def plain_win(pos: Position) -> int:
    moves = _plain_moves(pos)
    count = [0]

    def win(col: int, me: int, opp: int) -> bool:
        count[0] += 1
        nc = col | (1 << me)
        return any(not win(nc, opp, d) for d in moves(col, me, opp))

    win(pos.collapsed, pos.pawns[0], pos.pawns[1])
    return count[0]


def plain_length(pos: Position) -> int:
    moves = _plain_moves(pos)
    count = [0]
    n = pos.cells

    def val(col: int, me: int, opp: int, faces: int, alpha: int, beta: int) -> int:
        count[0] += 1
        ds = moves(col, me, opp)
        if not ds:
            return -faces
        nc = col | (1 << me)
        best = -n - 1
        for d in ds:
            v = -val(nc, opp, d, faces - 1, -beta, -max(alpha, best))
            if v > best:
                best = v
                if best >= beta:
                    break
        return best

    val(pos.collapsed, pos.pawns[0], pos.pawns[1], n, -n - 1, n + 1)
    return count[0]


# -- timing -----------------------------------------------------------------------------


def time_one(fn: Callable[[Position], int], pos: Position, repeat: int, cold: bool) -> tuple:
    best = float("inf")
    nodes = 0
    for _ in range(repeat):
        if cold:
            for memo in tables_for(pos.width, pos.height, pos.rules).memo:
                memo.clear()
        t0 = time.process_time()
        nodes = fn(pos)
        best = min(best, time.process_time() - t0)
    return best * 1000, nodes


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="runs per deal, best kept (default 3)")
    ap.add_argument("--baseline", type=int, default=10, help="deals for the baseline (0: none)")
    ap.add_argument("--cold", action="store_true", help="clear the move-table memo every deal")
    ap.add_argument("--rules", nargs="*", default=["classic", "standard"])
    ap.add_argument("--json", metavar="PATH", default=None)
    args = ap.parse_args(argv)

    kinds: list[tuple[str, Callable[[Position], int], Callable[[Position], int] | None]] = [
        ("win/loss", solve_win, plain_win),
        ("length", solve_length, plain_length),
        ("analysis", solve_analysis, None),
    ]
    rows = []
    warm_s = 0.0
    if not args.cold:
        t0 = time.process_time()
        for rules in args.rules:
            for pos in bench_deals(rules, 100, seed="bench-warm-up"):
                solve_analysis(pos)
        warm_s = time.process_time() - t0
    for rules in args.rules:
        deals = bench_deals(rules, args.deals)
        for kind, fn, plain in kinds:
            ms, nodes = zip(*(time_one(fn, p, args.repeat, args.cold) for p in deals), strict=True)
            row = {
                "rules": rules,
                "solve": kind,
                "deals": len(deals),
                "median_ms": statistics.median(ms),
                "p90_ms": pct(list(ms), 0.9),
                "median_positions": statistics.median(nodes),
                "target_ms": TARGETS.get((rules, kind)),
            }
            if plain is not None and args.baseline:
                sub = deals[: args.baseline]
                base = [time_one(plain, p, 1, False)[0] for p in sub]
                ours = ms[: args.baseline]
                row["baseline_median_ms"] = statistics.median(base)
                row["speedup"] = statistics.median(base) / statistics.median(ours)
            rows.append(row)
            print(_fmt(row), flush=True)
    _table(rows, args, warm_s)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": rows, "warm_up_s": warm_s, "args": vars(args)}, indent=2)
        )
    return 0


def _fmt(row: dict) -> str:
    return f"  {row['rules']} {row['solve']}: median {row['median_ms']:.2f} ms"


def _table(rows: list[dict], args: argparse.Namespace, warm_s: float) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency
        for r in rows:
            print(r)
        return
    t = Table(
        title=f"Collapsi solver, 4x4 deals from the start ({args.deals} per rule set, "
        f"best of {args.repeat}, CPU ms, {'cold' if args.cold else 'warm'} move tables)"
    )
    for col in (
        "rules",
        "solve",
        "median ms",
        "p90 ms",
        "Rust target (median)",
        "positions (median)",
        f"plain negamax ms (median of {args.baseline})",
        "speed-up vs plain",
    ):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            r["rules"],
            r["solve"],
            f"{r['median_ms']:.2f}",
            f"{r['p90_ms']:.2f}",
            "-" if r["target_ms"] is None else f"{r['target_ms']:.1f}",
            f"{r['median_positions']:.0f}",
            f"{r['baseline_median_ms']:.0f}" if "baseline_median_ms" in r else "-",
            f"{r['speedup']:.0f}x" if "speedup" in r else "-",
        )
    Console(width=160).print(t)
    if not args.cold:
        print(f"move-table memo warm-up (100 deals per rule set, analysed): {warm_s:.1f} s CPU")


if __name__ == "__main__":
    sys.exit(main())
