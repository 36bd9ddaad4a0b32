"""The strength ladder: each AI level against the level below, in seeded paired matches.

Every deal is played twice with the sides swapped, so a deal that favours one
seat favours both players once. Games run through :class:`engine.match.Match`,
the same authority that rooms and tournaments use. A level's score is
1 per win, 1/2 per draw; the 95% interval is the normal approximation over
the per-deal pair scores (pairs, not games, are the independent samples).
Budgets are iteration budgets, so a run is reproducible to the move.

    .venv/bin/python bench/ladder.py --deals 60 --jobs 2
    .venv/bin/python bench/ladder.py --game collecto --deals 30 --json ladder.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from engine.ai import make_player
from engine.match import Match

#: the rungs, weakest first: (level, iteration budget per move)
LADDERS: dict[str, list[tuple[str, int | None]]] = {
    "collapsi": [("random", None), ("greedy", None), ("mcts", 300), ("perfect", 300)],
    "collecto": [("random", None), ("greedy", None), ("search", 400)],
}


@dataclass(frozen=True)
class Rung:
    game: str
    rules: str | None
    upper: tuple[str, int | None]
    lower: tuple[str, int | None]


def play_pair(rung: Rung, deal: int, seed: int) -> tuple[float, float, int]:
    """Both games of one deal; returns the upper level's score in each and the plies."""
    scores = []
    plies = 0
    for upper_seat in (0, 1):
        levels = [rung.lower, rung.lower]
        levels[upper_seat] = rung.upper
        bots = [
            make_player(rung.game, lv, seed=seed * 1000 + deal * 2 + s, iterations=it)
            for s, (lv, it) in enumerate(levels)
        ]
        names = [f"{lv}#{s}" for s, (lv, _) in enumerate(levels)]
        match = Match.new(rung.game, names, rules=rung.rules, seed=seed * 100_000 + deal)
        match.start(0)
        while not match.over:
            seat = match.to_move()
            assert seat is not None
            match.submit_move(seat, bots[seat].choose(match.game), 0)
        result = match.result
        assert result is not None
        if result.winner is None:
            scores.append(0.5)
        else:
            scores.append(1.0 if result.winner == upper_seat else 0.0)
        plies += len(match.game.history)
    return scores[0], scores[1], plies


def _task(args: tuple[Rung, int, int]) -> tuple[float, float, int]:
    return play_pair(*args)


def interval(pairs: list[float]) -> tuple[float, float, float]:
    """Mean pair score and its 95% normal-approximation interval (clipped to [0, 1])."""
    mean = statistics.fmean(pairs)
    sd = statistics.stdev(pairs) if len(pairs) > 1 else 0.0
    half = 1.96 * sd / math.sqrt(len(pairs))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def _label(level: tuple[str, int | None]) -> str:
    name, it = level
    return name if it is None else f"{name} ({it} it)"


def run(game: str, rules: str | None, deals: int, seed: int, jobs: int) -> list[dict]:
    ladder = LADDERS[game]
    rows = []
    for lower, upper in itertools.pairwise(ladder):
        rung = Rung(game, rules, upper, lower)
        started = time.perf_counter()
        work = [(rung, d, seed) for d in range(deals)]
        if jobs > 1:
            with ProcessPoolExecutor(jobs) as pool:
                out = list(pool.map(_task, work))
        else:
            out = [_task(w) for w in work]
        pairs = [(a + b) / 2 for a, b, _ in out]
        games = [s for a, b, _ in out for s in (a, b)]
        mean, lo, hi = interval(pairs)
        rows.append(
            {
                "game": game,
                "rules": rules,
                "level": _label(upper),
                "against": _label(lower),
                "deals": deals,
                "games": len(games),
                "wins": sum(1 for s in games if s == 1.0),
                "draws": sum(1 for s in games if s == 0.5),
                "losses": sum(1 for s in games if s == 0.0),
                "score": mean,
                "ci95": [lo, hi],
                "beats": lo > 0.5,
                "mean_plies": sum(p for _, _, p in out) / len(games),
                "seconds": time.perf_counter() - started,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", choices=[*LADDERS, "all"], default="all")
    ap.add_argument("--rules", default="standard", help="Collapsi rule set (standard, classic)")
    ap.add_argument("--deals", type=int, default=60, help="deals per rung (two games each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    games = list(LADDERS) if args.game == "all" else [args.game]
    rows = []
    for game in games:
        rules = args.rules if game == "collapsi" else None
        rows += run(game, rules, args.deals, args.seed, args.jobs)
    table = Table(title=f"strength ladder: {args.deals} deals x 2 games per rung, seed {args.seed}")
    for col in ("game", "level", "vs level below", "W-D-L", "score", "95% interval", "beats"):
        table.add_column(col)
    for r in rows:
        game = r["game"] + (f" ({r['rules']})" if r["rules"] else "")
        table.add_row(
            game,
            r["level"],
            r["against"],
            f"{r['wins']}-{r['draws']}-{r['losses']}",
            f"{r['score']:.3f}",
            f"{r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}",
            "yes" if r["beats"] else "NO",
        )
    Console(width=120).print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(r["beats"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
