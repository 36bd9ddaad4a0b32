"""``arena engine check CMD``: test an engine program against the engine protocol.

    arena engine check "python3 clients/examples/python/random_engine.py"
    arena engine check ./my-engine --move-ms 500

Runs the handshake, ``isready``, lines the engine must ignore, one complete game
of every game and variant (Collapsi standard and classic, Shifting Board, Player's
Choice, a custom board, Big Board with 3 and 4 players, Collecto), checking each
answer is legal and within ``--move-ms``, then ``stop`` and ``quit``. Prints a
report; exit status 0 if everything passed, 1 if anything failed.
"""

from __future__ import annotations

import argparse
import asyncio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="check an engine program (see ENGINE_PROTOCOL.md)")
    check.add_argument("engine_command", metavar="CMD", help='the engine, e.g. "./my-engine -q"')
    check.add_argument(
        "--move-ms", type=int, default=2000, help="time allowed per answer (default 2000)"
    )
    check.add_argument("--seed", type=int, default=1, help="seed of the deals and seats")


def run(args: argparse.Namespace) -> int:
    from clients.engines.check import check_engine

    def say(text: str) -> None:
        print(text, flush=True)

    passed = asyncio.run(check_engine(args.engine_command, say, args.move_ms, args.seed))
    return 0 if passed else 1
