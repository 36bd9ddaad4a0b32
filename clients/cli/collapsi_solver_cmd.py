"""``arena collapsi solve`` and ``arena collapsi survey``: perfect play from the command line.

``solve --json`` is a contract other parts rely on; it prints exactly
``{"to_move": "red"|"blue", "winner": "red"|"blue", "plies": N,
"moves": {"<cell>": plies_if_played, ...}}`` where ``plies`` counts the plies
still to be played under game-length-perfect play (the winner shortens the
game, the loser prolongs it; 0 when the side to move has no move) and each
move's value is the same count including that move.

``survey`` solves seeded random 4x4 deals (in worker processes with
``--jobs``) and prints the first player's win share with a 95% Wilson
interval and the histogram of game lengths, beside the figures of "Collapsi
is strongly solved" (M. Young, 2025, Table 1) for the classic rules.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

from clients.cli import CliError
from clients.cli.collapsi_args import replay_moves
from engine.collapsi.position import JACK, Position
from engine.collapsi.solver import DEFAULT_MAX_NODES, SolverBudgetExceeded, analyse, solve_length

SEATS = ("red", "blue")
DECK_4X4 = "JJ11112222333344"  # two jacks/jokers, four A, 2, 3 and two 4s (both rule sets)

#: the paper's Table 1 (classic rules, every deal, weighted by symmetry class)
PAPER_TABLE1 = {
    7: 24,
    8: 142_686,
    9: 87_936,
    10: 3_238_032,
    11: 5_505_996,
    12: 23_147_802,
    13: 12_127_044,
    14: 3_047_730,
}
PAPER_DEALS = 47_297_250
PAPER_RED_WINS = 17_721_000  # 37.5%


# -- solve --------------------------------------------------------------------------


def _add_solve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="standard", help="standard (v1.3.1, default) or classic")
    p.add_argument(
        "--deal",
        required=True,
        help="a deal (e.g. J123412341231J23; 16 cards: 4x4, 36: Big Board, other sizes: "
        "a custom board) or a position string",
    )
    p.add_argument("--moves", default="", help="moves played so far, comma-separated cells")
    p.add_argument("--json", action="store_true", help="print the JSON contract only")
    p.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="give up (exit 2) after this many seconds of CPU time (not wall-clock: a busy "
        "machine does not cut the solve short)",
    )


def _variant_for(setup: str) -> str:
    """The two-player variant a deal or position string implies by its size: 16 cards
    are the base game, 36 Big Board (its unused jacks collapsed, ruling 4), any other
    size a custom board (ruling 8) whose deck is the deal itself."""
    cards = len(setup.strip().split(" ")[0].replace("/", ""))
    return {16: "base", 36: "big-board"}.get(cards, "custom")


def _position(deal: str, rules: str, moves: str) -> Position:
    from engine.collapsi import CollapsiGame

    game = CollapsiGame.from_setup(deal, rules=rules, variant=_variant_for(deal), players=2)
    replay_moves(game, moves)
    pos = game.to_position()
    if len(pos.pawns) != 2 or min(pos.pawns) < 0:
        raise CliError("the solver handles two-player positions with both pawns placed")
    return pos


def solve_contract(deal: str, rules: str, moves: str = "", max_seconds: float = 60.0) -> dict:
    """The ``solve --json`` answer as a dict."""
    pos = _position(deal, rules, moves)
    try:
        a = analyse(pos, max_seconds=max_seconds)
    except SolverBudgetExceeded as exc:
        raise CliError(
            f"{exc}; the position is too large to solve exhaustively within "
            f"--max-seconds {max_seconds:g} (and {DEFAULT_MAX_NODES:,} positions)"
        ) from None
    return {
        "to_move": SEATS[a.to_move],
        "winner": SEATS[a.winner],
        "plies": a.plies,
        "moves": {str(cell): plies for cell, plies in sorted(a.moves.items())},
    }


def _run_solve(args: argparse.Namespace) -> int:
    answer = solve_contract(args.deal, args.rules, args.moves, args.max_seconds)
    if args.json:
        print(json.dumps(answer))
        return 0
    mover, winner = answer["to_move"], answer["winner"]
    if not answer["moves"]:
        print(f"{mover} to move has no legal move: {winner} wins")
        return 0
    print(
        f"{mover} to move; {winner} wins with perfect play, "
        f"{answer['plies']} more plies under game-length-perfect play"
    )
    for cell, plies in answer["moves"].items():
        wins = plies % 2 == 1  # an odd count: the mover makes the last move
        verdict = f"{mover} wins" if wins else f"{mover} loses"
        mark = "  <- best" if plies == answer["plies"] else ""
        print(f"  {cell:>3}: {verdict} in {plies} plies{mark}")
    return 0


# -- survey -------------------------------------------------------------------------


def survey_deals(n: int, seed: int) -> list[str]:
    """``n`` uniformly random 4x4 deals, a pure function of ``seed``."""
    rng = random.Random(f"collapsi-survey-{seed}")
    deals = []
    for _ in range(n):
        cards = list(DECK_4X4)
        rng.shuffle(cards)
        deals.append("".join(cards))
    return deals


def _deal_position(deal: str, rules: str) -> Position:
    cards = tuple(JACK if ch == "J" else int(ch) for ch in deal)
    jacks = [i for i, v in enumerate(cards) if v == JACK]
    return Position(rules, 4, 4, cards, 0, (jacks[0], jacks[1]), 0)


def solve_batch(rules: str, deals: list[str]) -> list[tuple[int, int]]:
    """(winner seat, plies) for each deal; runs in worker processes."""
    return [solve_length(_deal_position(d, rules)) for d in deals]


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _add_survey_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="standard", help="standard (v1.3.1, default) or classic")
    p.add_argument("--deals", type=int, default=1000, help="how many random deals (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--json", metavar="PATH", default=None, help="also write the results here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_survey(
    rules: str,
    n: int,
    seed: int,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[int, int]]:
    """Solve ``n`` seeded deals; results in deal order."""
    if rules not in ("standard", "classic"):
        raise CliError(f"unknown rule set {rules!r} (expected standard or classic)")
    if n < 1:
        raise CliError("--deals must be at least 1")
    if jobs < 1:
        raise CliError("--jobs must be at least 1")
    deals = survey_deals(n, seed)
    chunk = max(1, min(100, n // (jobs * 8) or 1))
    batches = [deals[i : i + chunk] for i in range(0, n, chunk)]
    results: list[list[tuple[int, int]] | None] = [None] * len(batches)
    if jobs == 1:
        for i, batch in enumerate(batches):
            results[i] = solve_batch(rules, batch)
            if progress:
                progress(len(batch))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(solve_batch, rules, b): i for i, b in enumerate(batches)}
            for fut in as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                if progress:
                    progress(len(batches[i]))
    return [r for batch in results for r in batch or []]


def summarise(rules: str, results: list[tuple[int, int]]) -> dict:
    n = len(results)
    red = sum(1 for w, _ in results if w == 0)
    lo, hi = wilson(red, n)
    lengths = Counter(p for _, p in results)
    return {
        "rules": rules,
        "deals": n,
        "red_wins": red,
        "red_share": red / n,
        "red_share_95": [lo, hi],
        "lengths": {str(k): lengths[k] for k in sorted(lengths)},
    }


def _run_survey(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
    from rich.table import Table

    console = Console(soft_wrap=True)
    started = time.perf_counter()
    if args.no_progress:
        results = run_survey(args.rules, args.deals, args.seed, args.jobs)
    else:
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task(f"solving {args.rules} deals", total=args.deals)
            results = run_survey(
                args.rules,
                args.deals,
                args.seed,
                args.jobs,
                progress=lambda k: bar.advance(task, k),
            )
    elapsed = time.perf_counter() - started
    summary = summarise(args.rules, results)
    summary.update(seed=args.seed, jobs=args.jobs, seconds=round(elapsed, 2))
    n = summary["deals"]
    lo, hi = summary["red_share_95"]
    paper = args.rules == "classic"
    console.print(
        f"{args.rules} rules, {n} random deals (seed {args.seed}), solved in {elapsed:.1f} s"
    )
    line = (
        f"first player (red) wins {summary['red_wins']}/{n} = {100 * summary['red_share']:.2f}% "
        f"(95% Wilson interval {100 * lo:.2f}% - {100 * hi:.2f}%)"
    )
    if paper:
        line += f"; paper, all deals: {100 * PAPER_RED_WINS / PAPER_DEALS:.2f}%"
    console.print(line)
    table = Table(title="game length under game-length-perfect play")
    table.add_column("plies", justify="right")
    table.add_column("winner")
    table.add_column("deals", justify="right")
    table.add_column("%", justify="right")
    if paper:
        table.add_column("paper %", justify="right")
    counts = {int(k): v for k, v in summary["lengths"].items()}
    keys = sorted(set(counts) | (set(PAPER_TABLE1) if paper else set()))
    for k in keys:
        row = [str(k), "red" if k % 2 else "blue", str(counts.get(k, 0))]
        row.append(f"{100 * counts.get(k, 0) / n:.1f}")
        if paper:
            row.append(f"{100 * PAPER_TABLE1.get(k, 0) / PAPER_DEALS:.1f}")
        table.add_row(*row)
    console.print(table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=2)
    return 0


SUBCOMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {
    "solve": (
        "solve a deal or position: winner, game length and every move's value",
        _add_solve_arguments,
        _run_solve,
    ),
    "survey": (
        "solve many random deals: first player's win share and game lengths",
        _add_survey_arguments,
        _run_survey,
    ),
}
