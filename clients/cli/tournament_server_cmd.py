"""``arena tournament create|start|cancel|list|standings``: tournaments hosted by a server.

Operators create, start and cancel them with the server's admin token (``--admin-token``
or ``$ARENA_ADMIN_TOKEN``, the one given to ``arena serve``); anyone lists them and
reads (or follows) their standings. Players enter with ``arena bot --tournament ID``
or the TUI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from datetime import datetime
from typing import Any

from clients.cli import CliError

DEFAULT_URL = "ws://127.0.0.1:8765"
FORMATS = {"round-robin": "round_robin", "swiss": "swiss", "arena": "arena"}


def add_subcommands(sub: Any) -> None:
    """The server actions, beside ``run`` and ``stats``."""

    def common(p: argparse.ArgumentParser, admin: bool) -> None:
        p.add_argument("--url", default=DEFAULT_URL, help=f"server address ({DEFAULT_URL})")
        if admin:
            p.add_argument(
                "--admin-token",
                default=os.environ.get("ARENA_ADMIN_TOKEN"),
                help="the server's admin token (default $ARENA_ADMIN_TOKEN)",
            )
        p.add_argument("--json", action="store_true", help="print JSON")

    create = sub.add_parser(
        "create",
        help="create a tournament on a server (operators)",
        description="Create a hosted tournament; prints its id. Players enter with "
        "arena bot --tournament ID (or the TUI); it starts at --starts-at/--starts-in, or "
        "when you run arena tournament start ID.",
    )
    common(create, admin=True)
    create.add_argument("--name", required=True, help="its title")
    create.add_argument("--game", default="collapsi", help="collapsi (default) or collecto")
    create.add_argument("--rules", help="rule set (default: the game's)")
    create.add_argument("--variant", help="variant (default: the game's)")
    create.add_argument("--clock", default="none", help="none, 5+3 (min+s Fischer), fixed:10")
    create.add_argument("--rated", action="store_true", help="rate its games")
    create.add_argument("--format", choices=list(FORMATS), default="round-robin")
    create.add_argument("--rounds", type=int, help="swiss: rounds; round-robin: cycles (1)")
    create.add_argument("--duration", type=float, metavar="SECONDS", help="arena: its length")
    when = create.add_mutually_exclusive_group()
    when.add_argument("--starts-at", help="start time, ISO 8601 (2026-11-26T18:00:00+00:00)")
    when.add_argument("--starts-in", type=float, metavar="SECONDS", help="start this much later")
    create.add_argument("--max-players", type=int, help="entry limit")
    create.add_argument("--min-players", type=int, default=2, help="needed to start (2)")
    for action, what in (("start", "start an open tournament now"), ("cancel", "cancel it")):
        p = sub.add_parser(action, help=f"{what} (operators)", description=f"{what}.")
        common(p, admin=True)
        p.add_argument("id", help="the tournament's id")
    lst = sub.add_parser("list", help="the server's tournaments", description="List them.")
    common(lst, admin=False)
    lst.add_argument("--game", help="only this game's")
    st = sub.add_parser("standings", help="a hosted tournament's table", description="Print it.")
    common(st, admin=False)
    st.add_argument("id", help="the tournament's id")
    st.add_argument("--follow", action="store_true", help="print it again on every change")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


def _starts_at(args: argparse.Namespace) -> int | None:
    if args.starts_in is not None:
        return int((time.time() + args.starts_in) * 1000)
    if args.starts_at:
        try:
            when = datetime.fromisoformat(args.starts_at)
        except ValueError:
            raise CliError(f"--starts-at wants an ISO 8601 time, not {args.starts_at!r}") from None
        if when.tzinfo is None:
            raise CliError("--starts-at needs a time zone (…+00:00 or …Z)")
        return int(when.timestamp() * 1000)
    return None


def _create_message(args: argparse.Namespace) -> Any:
    from engine.match import BadTimeControl, TimeControl
    from protocol import messages as m
    from protocol.timecontrol import protocol_time_control

    try:
        tc = protocol_time_control(TimeControl.parse(args.clock))
    except BadTimeControl as exc:
        raise CliError(f"--clock: {exc}") from None
    fmt = FORMATS[args.format]
    if fmt == "swiss" and args.rounds is None:
        raise CliError("--format swiss needs --rounds")
    if fmt == "arena" and args.duration is None:
        raise CliError("--format arena needs --duration SECONDS")
    try:
        return m.CreateTournament(
            admin_token=args.admin_token,
            name=args.name,
            game=args.game,
            rules=args.rules,
            variant=args.variant,
            time_control=tc,
            rated=args.rated,
            format=fmt,
            rounds=args.rounds,
            duration_ms=None if args.duration is None else int(args.duration * 1000),
            starts_at=_starts_at(args),
            max_players=args.max_players,
            min_players=args.min_players,
        )
    except ValueError as exc:  # pydantic's: a bound broken
        raise CliError(f"bad settings: {exc}") from None


async def _run(args: argparse.Namespace) -> int:
    from clients.client import ArenaError, Client
    from protocol import messages as m

    action = args.tournament_command
    if action in ("create", "start", "cancel") and not args.admin_token:
        raise CliError("the server's admin token is needed: --admin-token or $ARENA_ADMIN_TOKEN")
    msg = _create_message(args) if action == "create" else None
    client = Client(args.url)
    try:
        await client.connect()
    except OSError as exc:
        raise CliError(f"cannot reach {args.url}: {exc}") from None
    try:
        if action == "create":
            reply = await client.request(msg)
            t = reply.tournament
            if args.json:
                print(json.dumps(t.model_dump(mode="json", exclude_none=True)))
            else:
                print(t.tournament)
                print(f"created {t.name!r}: {t.format}, {t.game}/{t.variant}, {t.status}")
        elif action in ("start", "cancel"):
            cls = m.StartTournament if action == "start" else m.CancelTournament
            await client.request(cls(admin_token=args.admin_token, tournament=args.id))
            print(f"{args.id}: {'started' if action == 'start' else 'cancelled'}")
        elif action == "list":
            for t in await client.list_tournaments(args.game):
                if args.json:
                    print(json.dumps(t.model_dump(mode="json", exclude_none=True)))
                else:
                    print(
                        f"{t.tournament}  {t.status:8} {t.format:11} {t.game}/{t.variant} "
                        f"players {t.players}  {t.name}"
                    )
        else:
            table = await (client.subscribe_tournament if args.follow else client.standings)(
                args.id
            )
            _print_table(table, args.json)
            while args.follow and table.status != "finished":
                table = await client.next("standings", timeout=None)
                _print_table(table, args.json)
    except ArenaError as exc:
        raise CliError(f"the server refused: {exc}") from None
    finally:
        await client.close()
    return 0


def _print_table(table: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(table.model_dump(mode="json", exclude_none=True)), flush=True)
        return
    s = table.summary
    title = f"{s.name} ({s.format}, {s.game}/{s.variant})" if s else table.tournament
    print(f"{title}: {table.status}, round {table.round}")
    print(f"{'#':>3} {'name':20} {'pts':>5} {'games':>5} {'+':>3} {'=':>3} {'-':>3} {'SB':>6}")
    for r in table.rows:
        mark = " (withdrawn)" if r.withdrawn else ""
        print(
            f"{r.rank:>3} {r.name[:20]:20} {r.points:>5g} {r.games:>5} {r.wins:>3} "
            f"{r.draws:>3} {r.losses:>3} {r.tiebreak or 0:>6g}{mark}"
        )
    sys.stdout.flush()
