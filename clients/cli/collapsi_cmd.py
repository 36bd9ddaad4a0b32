"""``arena collapsi ...``: deals and legal moves from the command line.

Subcommands here: ``deal`` (a reproducible deal from a seed) and ``moves``
(the legal moves after a deal and a move list). This is a contract other
parts rely on: ``moves --json`` prints exactly
``{"to_move": "red"|"blue", "moves": [cells...], "game_over": bool}``.

The solver's and the puzzles' subcommands (``solve``, ``survey``, ``puzzle``
...) live in their own modules, each exporting ``SUBCOMMANDS`` (name -> (help,
add_arguments(parser), run(args) -> int)); they are added here. Errors they
raise (``CliError``, engine errors) are reported like ours: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json

from clients.cli import CliError, collapsi_puzzle_cmd, collapsi_solver_cmd
from clients.cli.collapsi_args import replay_moves
from engine.collapsi import CollapsiGame


def _game_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rules", default="standard", help="rule set: standard (v1.3.1, default) or classic"
    )
    p.add_argument(
        "--variant",
        default=None,
        help="base (default), big-board, solo, custom, optionally +shifting / "
        "+players-choice; with --deal the default follows its size (36 cards: big-board)",
    )
    p.add_argument("--players", type=int, default=None, help="number of players (big-board)")
    p.add_argument(
        "--options",
        default=None,
        metavar="JSON",
        help='variant options as JSON, e.g. \'{"preset": "5x5"}\' or \'{"size": 4}\'',
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="collapsi_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("deal", help="print the reproducible deal for a seed")
    p.add_argument("--seed", type=int, required=True)
    _game_options(p)
    p.add_argument("--show", action="store_true", help="also print the board")
    p.set_defaults(_collapsi_run=_run_deal)

    p = sub.add_parser("moves", help="print the legal moves after a deal and a move list")
    p.add_argument(
        "--deal",
        required=True,
        help="the deal, e.g. 41J124313J322123, or a position 'BOARD PAWNS TO_MOVE'",
    )
    p.add_argument(
        "--moves",
        default="",
        help="moves played so far, comma-separated cells (Shifting Board: cell and shift, 3>)",
    )
    _game_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(_collapsi_run=_run_moves)

    extra = {**collapsi_solver_cmd.SUBCOMMANDS, **collapsi_puzzle_cmd.SUBCOMMANDS}
    for name, (help_text, add_args, run) in extra.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
        p.set_defaults(_collapsi_run=run)


def run(args: argparse.Namespace) -> int:
    return int(args._collapsi_run(args) or 0)


def _options(args: argparse.Namespace) -> dict | None:
    if not args.options:
        return None
    try:
        opts = json.loads(args.options)
    except json.JSONDecodeError as exc:
        raise CliError(f"--options is not valid JSON: {exc}") from None
    if not isinstance(opts, dict):
        raise CliError("--options must be a JSON object")
    return opts


def _run_deal(args: argparse.Namespace) -> int:
    game = CollapsiGame.new(
        rules=args.rules,
        variant=args.variant,
        seed=args.seed,
        players=args.players,
        options=_options(args),
    )
    print(game.setup())
    if args.show:
        print(game.render())
    return 0


def _variant_for_deal(deal: str) -> str:
    cards = len(deal.strip().replace("/", ""))
    return {16: "base", 36: "big-board"}.get(cards, "custom")


def _run_moves(args: argparse.Namespace) -> int:
    variant = args.variant or _variant_for_deal(args.deal)
    game = CollapsiGame.from_setup(
        args.deal,
        rules=args.rules,
        variant=variant,
        players=args.players,
        options=_options(args),
    )
    replay_moves(game, args.moves)
    pos = game.to_position()
    over = game.is_over()
    moves = [] if over else game.legal_cells()
    seat = game.seat_names()[pos.to_move]
    if args.json:
        # cells only (in Shifting Board each cell goes with any of the 4 shifts)
        print(json.dumps({"to_move": seat, "moves": list(moves), "game_over": over}))
    else:
        if over:
            print(game.render())
        else:
            print(f"{seat} to move ({game.steps()}): {' '.join(game.legal_moves())}")
    return 0
