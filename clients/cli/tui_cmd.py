"""``arena tui``: the full-screen client (sign in, lobby, play, watch, replay, offline).

arena tui                                  the local server (arena serve's default)
arena tui --url ws://host:8765             another server
arena tui --watch ROOM                     watch a game at once
arena tui --name ann --watch INVITE        watch a private room by its invite code
arena tui --replay arena-data/records/ROOM-1.json   a record file, no server
arena tui --replay rr/games.jsonl --game 0.1.3.0    a tournament's game, no server
arena tui --offline collapsi --level greedy         play an engine bot, no server
arena tui --offline collapsi --variant big-board --players 4   you and three bots
arena tui --puzzle 4 --difficulty hard              a Solo puzzle, no server
"""

from __future__ import annotations

import argparse
from pathlib import Path

from clients.cli import CliError
from engine.collapsi.solo import DIFFICULTIES, SIZES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server address")
    parser.add_argument("--name", help="sign in at once with this name")
    parser.add_argument("--token", help="the name's token (rated games need one)")
    parser.add_argument(
        "--watch",
        metavar="ROOM",
        help="watch this room at once: its id, or a private room's invite code (with --name)",
    )
    parser.add_argument("--replay", metavar="FILE", type=Path, help="replay a record file")
    parser.add_argument(
        "--game", metavar="ID", help="(--replay of a tournament's games.jsonl) the game's id"
    )
    parser.add_argument("--offline", metavar="GAME", help="play GAME against an engine bot")
    parser.add_argument("--level", default="greedy", help="the bot's level (--offline)")
    parser.add_argument("--variant", help="the variant (--offline)")
    parser.add_argument(
        "--players", type=int, choices=(2, 3, 4), default=2, help="(--offline) Big Board: 2-4"
    )
    parser.add_argument(
        "--puzzle", type=int, choices=SIZES, metavar="SIZE", help="a Solo puzzle, 3 (3x3) or 4"
    )
    parser.add_argument("--difficulty", choices=DIFFICULTIES, default="medium", help="(--puzzle)")
    parser.add_argument(
        "--seed", type=int, default=0, help="(--puzzle) the same seed, the same deal"
    )


def run(args: argparse.Namespace) -> int:
    from clients.tui.app import ArenaTui  # Textual is imported only for this command
    from engine.ai import LEVELS

    if args.offline and args.level not in LEVELS.get(args.offline, ()):
        raise CliError(f"levels for {args.offline}: {', '.join(LEVELS.get(args.offline, ()))}")
    if args.players > 2 and "big-board" not in (args.variant or ""):
        raise CliError("--players 3 or 4 plays Big Board: add --variant big-board")
    if args.replay is not None:
        from clients.record_file import RecordFileError, read_record

        if not args.replay.exists():
            raise CliError(f"no record file {args.replay}")
        try:
            read_record(args.replay, args.game)
        except RecordFileError as exc:
            raise CliError(str(exc)) from None
    offline = (args.offline, args.level, args.variant) if args.offline else None
    app = ArenaTui(
        args.url,
        name=args.name,
        token=args.token,
        record_file=args.replay,
        record_game=args.game,
        offline=offline,
        watch=args.watch,
        players=args.players,
        puzzle=(args.puzzle, args.difficulty, args.seed) if args.puzzle else None,
    )
    app.run()
    return 0
