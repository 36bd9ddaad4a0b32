"""The strength ladder: each AI level against the level below, in seeded paired matches.

Every deal is played once per seat with the upper level in that seat and the
level below in the others (twice, sides swapped, with two players), so a deal
that favours one seat favours every player once. With 3-4 players a game
scores the upper level's finishing place (1 first, 0 last, evenly between:
1/2 is an even share). Games run through :class:`engine.match.Match`,
the same authority that rooms and tournaments use. A level's score is
1 per win, 1/2 per draw; the 95% interval is the normal approximation over
the per-deal mean scores (deals, not games, are the independent samples).
Budgets are iteration budgets, so a run is reproducible to the move.

    .venv/bin/python bench/ladder.py --deals 60 --jobs 2
    .venv/bin/python bench/ladder.py --game boards --deals 20 --jobs 2
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
    "collecto": [("random", None), ("greedy", None), ("search", 400), ("strong", 4000)],
    # issue 20: the strong level against MCTS(300) on every other board
    "collapsi-5x5": [("mcts", 300), ("strong", 3000)],
    "collapsi-6x6": [("mcts", 300), ("strong", 3000)],
    "collapsi-big-board-3": [("mcts", 300), ("strong", 3000)],
    "collapsi-big-board-4": [("mcts", 300), ("strong", 3000)],
    "collapsi-shifting": [("mcts", 300), ("strong", 3000)],
}


@dataclass(frozen=True)
class Board:
    """What a ladder plays on: the game, its variant and options, and the seats."""

    game: str
    variant: str | None = None
    options: tuple[tuple[str, object], ...] = ()
    players: int = 2

    def label(self, rules: str | None) -> str:
        what = self.variant or ""
        if self.options:
            what = ", ".join(f"{v}" for _, v in self.options)
        if self.players > 2:
            what += f", {self.players} players"
        parts = [p for p in (rules, what) if p]
        return self.game + (f" ({'; '.join(parts)})" if parts else "")


BOARDS: dict[str, Board] = {
    "collapsi": Board("collapsi"),
    "collecto": Board("collecto"),
    "collapsi-5x5": Board("collapsi", "custom", (("preset", "5x5"),)),
    "collapsi-6x6": Board("collapsi", "custom", (("preset", "6x6-2p"),)),
    "collapsi-big-board-3": Board("collapsi", "big-board", players=3),
    "collapsi-big-board-4": Board("collapsi", "big-board", players=4),
    "collapsi-shifting": Board("collapsi", "shifting"),
}


@dataclass(frozen=True)
class Rung:
    game: str
    rules: str | None
    upper: tuple[str, int | None]
    lower: tuple[str, int | None]
    board: Board | None = None


def play_pair(rung: Rung, deal: int, seed: int) -> tuple[float, ...]:
    """Every game of one deal: the upper level takes each seat once, the lower level the
    others. Returns the upper level's score in each game (its finishing place: 1 first,
    0 last, evenly between; 1/2 for a draw), then the plies played in all of them."""
    board = rung.board or Board(rung.game)
    n = board.players
    scores = []
    plies = 0
    for upper_seat in range(n):
        levels = [rung.lower] * n
        levels[upper_seat] = rung.upper
        bots = [
            make_player(rung.game, lv, seed=seed * 1000 + deal * n + s, iterations=it)
            for s, (lv, it) in enumerate(levels)
        ]
        names = [f"{lv}#{s}" for s, (lv, _) in enumerate(levels)]
        match = Match.new(
            rung.game,
            names,
            rules=rung.rules,
            variant=board.variant,
            options=dict(board.options) or None,
            seed=seed * 100_000 + deal,
        )
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
            scores.append((n - 1 - result.order.index(upper_seat)) / (n - 1))
        plies += len(match.game.history)
    return (*scores, plies)


def _task(args: tuple[Rung, int, int]) -> tuple[float, ...]:
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


def run(
    name: str, rules: str | None, deals: int, seed: int, jobs: int, top: bool = False
) -> list[dict]:
    """Every rung of ladder ``name`` (a key of :data:`LADDERS`); ``top``: the top one only."""
    ladder = LADDERS[name][-2:] if top else LADDERS[name]
    board = BOARDS[name]
    game = board.game
    rows = []
    for lower, upper in itertools.pairwise(ladder):
        rung = Rung(game, rules, upper, lower, board)
        started = time.perf_counter()
        work = [(rung, d, seed) for d in range(deals)]
        if jobs > 1:
            with ProcessPoolExecutor(jobs) as pool:
                out = list(pool.map(_task, work))
        else:
            out = [_task(w) for w in work]
        pairs = [statistics.fmean(o[:-1]) for o in out]
        games = [s for o in out for s in o[:-1]]
        mean, lo, hi = interval(pairs)
        rows.append(
            {
                "game": game,
                "ladder": name,
                "board": board.label(rules),
                "rules": rules,
                "level": _label(upper),
                "against": _label(lower),
                "deals": deals,
                "games": len(games),
                "wins": sum(1 for s in games if s == 1.0),
                "draws": sum(1 for s in games if 0.0 < s < 1.0),  # or middle places
                "losses": sum(1 for s in games if s == 0.0),
                "score": mean,
                "ci95": [lo, hi],
                "beats": lo > 0.5,
                "mean_plies": sum(o[-1] for o in out) / len(games),
                "seconds": time.perf_counter() - started,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--game",
        choices=[*LADDERS, "all", "boards"],
        default="all",
        help="a ladder; all: collapsi and collecto; boards: the other Collapsi boards",
    )
    ap.add_argument("--rules", default="standard", help="Collapsi rule set (standard, classic)")
    ap.add_argument("--deals", type=int, default=60, help="deals per rung (two games each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", action="store_true", help="only each ladder's top rung")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.game == "all":
        names = ["collapsi", "collecto"]
    elif args.game == "boards":
        names = [n for n in LADDERS if n.startswith("collapsi-")]
    else:
        names = [args.game]
    rows = []
    for name in names:
        rules = args.rules if BOARDS[name].game == "collapsi" else None
        rows += run(name, rules, args.deals, args.seed, args.jobs, args.top)
    table = Table(title=f"strength ladder: {args.deals} deals x 2 games per rung, seed {args.seed}")
    for col in ("board", "level", "vs level below", "W-D-L", "score", "95% interval", "beats"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["board"],
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
