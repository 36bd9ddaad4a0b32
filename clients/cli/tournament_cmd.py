"""``arena tournament``: run tournaments between AI players, and their statistics;
hosted tournaments on a server (create, start, cancel, list, standings: in
:mod:`clients.cli.tournament_server_cmd`).

``run`` plays a local tournament (no server): built-in levels and engine
programs, round robin, gauntlet, Swiss or knockout, paired deals, several games
at once, SPRT; records every game as a JSON line in ``--out`` and can be resumed
(``--resume DIR``) after Ctrl-C or a kill. ``stats`` computes Elo, its error,
nElo, LOS and an SPRT from pentanomial (game pair) or trinomial counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clients.cli import CliError
from clients.tournament.config import (
    ConfigError,
    TournamentConfig,
    load_toml,
    parse_participant,
    read_setups,
)
from clients.tournament.elo import StatsError, pentanomial, trinomial
from clients.tournament.pairings import FORMATS
from clients.tournament.sprt import Sprt

if TYPE_CHECKING:
    from clients.tournament.report import LiveDisplay

#: flag name -> config field, for flags that override a config file when given
_FLAG_FIELDS = (
    "game",
    "rules",
    "variant",
    "seats",
    "format",
    "cycles",
    "rounds",
    "gauntlet_seeds",
    "deals",
    "seed",
    "concurrency",
    "tc",
    "adjudicate",
    "move_timeout_ms",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    run = sub.add_parser(
        "run",
        help="play a local tournament",
        description="Play a tournament on this machine: built-in levels (--level, or --engine "
        "name=..,level=..,iterations=..) and engine programs (--engine name=..,cmd=PROGRAM); "
        "each deal is played once per seat order. Results go to --out (games.jsonl, "
        "state.json, results.json).",
    )
    run.add_argument("--config", type=Path, help="a TOML file ([[participant]] tables + settings)")
    run.add_argument("--level", action="append", default=[], help="a built-in level (repeatable)")
    run.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="KEY=VALUE,...",
        help="a participant: name=,level=|cmd=,iterations=,budget_ms=,seed=,tc=,option.X= "
        "(cmd= last: the rest is the command line)",
    )
    run.add_argument("--game", help="collapsi (default) or collecto")
    run.add_argument("--rules", help="rule set (collapsi: standard or classic)")
    run.add_argument("--variant", help="variant (collapsi: base, big-board, ...)")
    run.add_argument("--seats", type=int, help="players per game (3-4: Big Board groups)")
    run.add_argument("--format", choices=FORMATS, help="default round-robin")
    run.add_argument("--cycles", type=int, help="round robin / gauntlet repetitions")
    run.add_argument("--rounds", type=int, help="Swiss rounds (default: log2 of the field)")
    run.add_argument("--gauntlet-seeds", type=int, help="gauntlet: how many lead players")
    run.add_argument("--deals", type=int, help="deals per encounter and round (default 2)")
    run.add_argument("--setups", type=Path, help="a file of deals (one setup per line)")
    run.add_argument("--seed", type=int, help="seed of deals and players (default 1)")
    run.add_argument("--concurrency", type=int, help="games at once (default 1)")
    run.add_argument(  # (--clock: as arena bot and the server's tournaments spell it)
        "--tc", "--clock", dest="tc", help="time control for all: none, 5+3, fixed:0.1"
    )
    run.add_argument("--move-timeout-ms", type=int, help="an engine's silence without clock")
    run.add_argument("--adjudicate", choices=("none", "solver"), help="4x4 Collapsi: solver")
    run.add_argument("--sprt", help="elo0=0,elo1=10,alpha=0.05,beta=0.05,model=logistic")
    run.add_argument("--out", type=Path, help="output directory (default tournament-SEED)")
    run.add_argument("--resume", type=Path, metavar="DIR", help="continue the tournament in DIR")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--quiet", action="store_true", help="no progress display")

    stats = sub.add_parser(
        "stats",
        help="Elo, error bars, LOS and SPRT from result counts",
        description="Statistics of a result table, as fastchess computes them.",
    )
    group = stats.add_mutually_exclusive_group(required=True)
    group.add_argument("--penta", help="pair counts LL,LD,DD,WD,WW (DD: pairs scoring 1 point)")
    group.add_argument("--tri", help="game counts L,D,W (unpaired results)")
    stats.add_argument("--sprt", help="elo0=..,elo1=..,alpha=..,beta=..,model=logistic|normalized")
    stats.add_argument("--json", action="store_true", help="print JSON")
    from clients.cli.tournament_server_cmd import add_subcommands

    add_subcommands(sub)


def run(args: argparse.Namespace) -> int:
    try:
        if args.tournament_command == "stats":
            return _stats(args)
        if args.tournament_command in ("create", "start", "cancel", "list", "standings"):
            from clients.cli import tournament_server_cmd

            return tournament_server_cmd.run(args)
        return _run(args)
    except (ConfigError, StatsError, ValueError) as exc:
        raise CliError(str(exc)) from None


# -- stats ----------------------------------------------------------------------------
def _counts(text: str, n: int, what: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(x) for x in text.replace(" ", "").split(","))
    except ValueError:
        raise CliError(f"{what} takes {n} whole numbers separated by commas") from None
    if len(counts) != n:
        raise CliError(f"{what} takes {n} numbers, got {len(counts)}")
    return counts


def stats_of(
    penta: tuple[int, ...] | None, tri: tuple[int, ...] | None, sprt: Sprt | None
) -> dict[str, Any]:
    """The ``stats`` command's figures (also used for the runner's summary)."""
    est = pentanomial(penta) if penta is not None else trinomial(tri)  # type: ignore[arg-type]
    out: dict[str, Any] = {k: v for k, v in est.to_dict().items() if k not in ("samples",)}
    if sprt is not None:
        llr = sprt.llr_penta(penta) if penta is not None else sprt.llr_tri(tri)  # type: ignore[arg-type]
        out.update(
            llr=llr,
            lower_bound=sprt.lower_bound,
            upper_bound=sprt.upper_bound,
            decision=sprt.decision(llr),
            model=sprt.model,
        )
    return out


def _stats(args: argparse.Namespace) -> int:
    penta = _counts(args.penta, 5, "--penta") if args.penta else None
    tri = _counts(args.tri, 3, "--tri") if args.tri else None
    sprt = Sprt.parse(args.sprt) if args.sprt else None
    out = stats_of(penta, tri, sprt)
    if args.json:
        print(json.dumps(out))
        return 0
    for key, value in out.items():
        print(f"{key:12} {_fmt(value)}")
    return 0


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


# -- run ------------------------------------------------------------------------------
def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    """The config file (if any) with the flags given on top; participants from both."""
    data: dict[str, Any] = load_toml(args.config) if args.config else {}
    for name in _FLAG_FIELDS:
        value = getattr(args, name)
        if value is not None:
            data[name] = value
            if name == "tc":
                data.pop("clock", None)  # (the file's spelling of it: the flag wins)
    if args.setups is not None:
        data["setups"] = read_setups(args.setups)
    if args.sprt is not None:
        data["sprt"] = args.sprt
    participants = list(data.get("participants", []))
    participants += [{"level": lv, "name": lv} for lv in args.level]
    participants += [parse_participant(text) for text in args.engine]
    data["participants"] = participants
    return TournamentConfig.from_dict(data).validate()


def _run(args: argparse.Namespace) -> int:
    from clients.tournament.runner import Runner

    if args.resume is not None:
        state = args.resume / "state.json"
        if not state.exists():
            raise CliError(f"no tournament to resume in {args.resume} (no state.json)")
        config = TournamentConfig.from_dict(json.loads(state.read_text())["config"])
        if args.concurrency:
            config = config.with_changes(concurrency=args.concurrency)
        out = args.resume
    else:
        config = config_from_args(args)
        out = args.out or Path(f"tournament-{config.seed}")
    display = None if args.quiet else _display()
    runner = Runner(config, out, listener=display.update if display else None)
    try:
        if display:
            with display:
                summary = asyncio.run(runner.run())
        else:
            summary = asyncio.run(runner.run())
    except KeyboardInterrupt:
        print(
            f"interrupted after {runner.games_committed} games; "
            f"continue with: arena tournament run --resume {out}",
            file=sys.stderr,
        )
        return 130
    if args.json:
        print(json.dumps(summary))
    else:
        from clients.tournament.report import print_summary

        print_summary(summary)
    return 0


def _display() -> LiveDisplay:
    from clients.tournament.report import LiveDisplay

    return LiveDisplay()
