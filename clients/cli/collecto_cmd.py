"""``arena collecto``: deal boards, list legal moves, apply a move.

Boards are 49 digits row by row (0 empty, 1 blue, 2 yellow, 3 red, 4 orange,
5 purple, 6 green); moves are ``N`` (0-27) or ``a,b`` (ruling 15). With
``--json`` the output is exactly the documented object, for scripts and clients.
"""

from __future__ import annotations

import argparse
import json

from engine.collecto import board as B
from engine.collecto.deal import deal

BOARD_HELP = "49 digits row by row: 0 empty, 1 blue, 2 yellow, 3 red, 4 orange, 5 purple, 6 green"
MOVE_HELP = (
    "N or a,b: 0-6 push row N left, 7-13 row N-7 right, 14-20 column N-14 up, "
    "21-27 column N-21 down; a,b is a double move (a first)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = sub.add_parser("deal", help="print the board dealt from a seed (ruling 10)")
    p.add_argument("--seed", type=int, required=True, help="integer seed; same seed, same board")
    p.add_argument("--render", action="store_true", help="also print a picture of the board")

    p = sub.add_parser(
        "moves", help="list the legal moves; doubles only when no single move exists"
    )
    p.add_argument("--board", required=True, help=BOARD_HELP)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"single": [...], "double": [[a, b], ...], "game_over": bool}',
    )

    p = sub.add_parser("apply", help="apply one move and print the board and what it collects")
    p.add_argument("--board", required=True, help=BOARD_HELP)
    p.add_argument("--move", required=True, help=MOVE_HELP)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"board": "<49 digits>", "collected": {"<colour digit>": count, ...}}',
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "deal":
        board = deal(args.seed)
        print(B.format_board(board))
        if args.render:
            print(B.render(board))
        return 0
    board = B.parse_board(args.board)
    if args.action == "moves":
        singles, doubles = B.legal_moves(board)
        if args.json:
            data = {
                "single": singles,
                "double": [list(d) for d in doubles],
                "game_over": not singles and not doubles,
            }
            print(json.dumps(data))
        elif singles:
            print("single: " + " ".join(map(str, singles)))
        elif doubles:
            print("double: " + " ".join(B.format_move(d) for d in doubles))
        else:
            print("game over: no valid single or double move")
        return 0
    after, counts = B.apply_move(board, B.parse_move(args.move))
    taken = {str(c): counts[c] for c in range(1, B.COLOURS + 1) if counts[c]}
    if args.json:
        print(json.dumps({"board": B.format_board(after), "collected": taken}))
    else:
        print(B.format_board(after))
        print("collected: " + ", ".join(f"{n} {B.COLOUR_NAMES[int(c)]}" for c, n in taken.items()))
    return 0
