"""``arena collapsi puzzle``: a seeded, solvable Solo puzzle (ruling 7), rated by difficulty.

``arena collapsi puzzle --size 3|4 --difficulty easy|medium|hard --seed S``
prints the deal, a picture of the board (``P`` the pawn on the start jack,
``E`` the exit jack) and the solution-space figures the rating comes from;
``--solution`` adds one winning line (cells, row-major from 0); ``--json``
prints the same as one JSON object.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from engine.collapsi.solo import DIFFICULTIES, SIZES, generate


def _add_puzzle_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", type=int, choices=SIZES, default=3, help="3 (3x3) or 4 (4x4)")
    p.add_argument("--difficulty", choices=DIFFICULTIES, default="medium")
    p.add_argument("--seed", type=int, default=0, help="the same seed gives the same puzzle")
    p.add_argument(
        "--rules", default="standard", help="standard (jack moves 1, default) or classic (1-4)"
    )
    p.add_argument("--solution", action="store_true", help="also print a winning line")
    p.add_argument("--json", action="store_true", help="print JSON")


def _run_puzzle(args: argparse.Namespace) -> int:
    puzzle = generate(args.size, args.difficulty, args.seed, rules=args.rules)
    if args.json:
        data = puzzle.to_dict()
        if not args.solution:
            del data["solution"]
        print(json.dumps(data))
        return 0
    a = puzzle.analysis
    game = puzzle.game()
    lines = [
        f"Solo puzzle {puzzle.size}x{puzzle.size} ({puzzle.rules} rules), "
        f"difficulty {puzzle.difficulty}, seed {puzzle.seed}",
        f"deal: {puzzle.deal}",
        *game.render().splitlines()[:-1],  # the board without its "to move" line
    ]
    lines.append(
        "collapse every card, then land on or pass through the exit E; cells are row-major from 0"
    )
    lines.append(
        f"winning lines: {a.winning_lines} of {a.lines} ({100 * a.share:.2f}%); "
        f"winning first moves: {len(a.winning_first_moves)} of {a.first_moves}"
    )
    if args.solution:
        lines.append("solution: " + ", ".join(puzzle.solution))
    print("\n".join(lines))
    return 0


SUBCOMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {
    "puzzle": (
        "print a solvable Solo puzzle for a size, difficulty and seed (--solution: a winning line)",
        _add_puzzle_arguments,
        _run_puzzle,
    ),
}
