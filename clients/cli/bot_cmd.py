"""``arena bot``: connect one bot to a server and keep it playing.

    arena bot --name my-bot --token s3cret-token-of-my-bot --engine ./engine --quick-match collapsi
    arena bot --name house --level greedy --open-room collapsi --variant big-board --seats 3
    arena bot --name host --engine ./my-engine --accept-challenges
    arena bot --name rival --level greedy --challenge host collapsi/shifting collecto
    arena bot --config bot.toml

The bot is an engine program speaking the engine protocol (clients/ENGINE_PROTOCOL.md;
``--engine "CMD ARGS"``), a built-in AI level (``--level``), or a Python bot class
(clients/bot/sdk.py). Each game gets its own engine process. The runner keeps the
clocks (``--margin-ms`` is kept back for the network), resumes after a dropped
connection, restarts an engine that crashed, and stops an engine after
``--max-strikes`` misbehaviours (exit status 1; so does a ``--challenge`` run with
nothing left to ask). One line per game on standard output; ``--log-dir`` keeps a log
per game (every engine line included). Ctrl-C or SIGTERM resigns the games under way
(one in which not every player has moved yet is aborted instead), gives their results,
logs out and exits (status 130 or 143).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bot.retries import AGAIN_AFTER_S, AGAIN_AT_MOST_S, ANSWER_WAIT_S, OFFLINE_AT_MOST_S
from clients.cli import CliError

if TYPE_CHECKING:
    from clients.bot.brains import Brain, Log, Strike
    from clients.bot.config import BotConfig
    from clients.bot.runner import BotRunner
    from clients.bot.sdk import Bot


def add_arguments(parser: argparse.ArgumentParser, sdk: bool = False) -> None:
    """``arena bot``'s flags (``sdk``: a Python bot's, which has no engine or level)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    if not sdk:
        parser.description = __doc__
    parser.add_argument(
        "--config", metavar="FILE", help="a TOML file of these settings (flags win)"
    )
    parser.add_argument("--url", help="server address (default ws://127.0.0.1:8765)")
    parser.add_argument("--name", help="the bot's name (shown with a bot mark)")
    parser.add_argument(
        "--token",
        help="secret that claims the name: 16+ characters, 8 of them different (rated games "
        "need it; a bot started again with it within the server's grace period takes up "
        "the games its last run left running)",
    )
    if not sdk:
        _who_plays(parser)
    _what_and_how(parser)


def _who_plays(parser: argparse.ArgumentParser) -> None:
    who = parser.add_argument_group("who plays (one of)")
    who.add_argument("--engine", metavar="CMD", help='an engine program, e.g. "./my-engine -q"')
    who.add_argument(
        "--level",
        help="a built-in AI level (random, greedy, mcts, perfect, strong; "
        "Collecto: random, greedy, search, strong)",
    )
    who.add_argument(
        "--engine-option",
        action="append",
        metavar="NAME=VALUE",
        help="set an option the engine declared (repeatable; an undeclared one, or a value "
        "it does not take, stops the run)",
    )


def _again(most: float) -> str:
    return f"after {AGAIN_AFTER_S:g} s, doubling to {most:g} s"


def _what_and_how(parser: argparse.ArgumentParser) -> None:
    what = parser.add_argument_group("what it plays")
    what.add_argument(
        "--quick-match",
        nargs="+",
        metavar="GAME",
        help="queue for quick match; GAME is GAME[/VARIANT[/RULES]], several are taken in turn",
    )
    what.add_argument("--open-room", nargs="+", metavar="GAME", help="keep a room open")
    what.add_argument("--join", nargs="+", metavar="GAME", help="sit down in open rooms")
    what.add_argument(
        "--tournament",
        metavar="ID",
        help="enter the server's tournament ID, play its pairings, stop when it is over",
    )
    what.add_argument(
        "--challenge",
        nargs="+",
        metavar="NAME_THEN_GAME",
        help="challenge the player NAME to GAME... in turn (default collapsi); a decline "
        f"for being busy (or for no reason) is asked again later ({_again(AGAIN_AT_MOST_S)}),"
        " one for good is not: a game NAME does not play is left out, and the run stops "
        "(exit 1) when nothing is left to ask (with --accept-challenges, it waits for "
        f"challenges); a challenge unanswered for {ANSWER_WAIT_S:g} s is taken back and "
        f"sent again, and a player not online is asked again ({_again(OFFLINE_AT_MOST_S)})",
    )
    what.add_argument(
        "--accept-challenges",
        action="store_true",
        default=None,
        help="accept challenges while there is room for a game (with any mode); others "
        "are declined saying why (busy; a game its level or engine does not play; rated "
        "without --token)",
    )
    what.add_argument(
        "--accept-games",
        nargs="+",
        metavar="GAME",
        help="accept challenges to these only (GAME[/VARIANT[/RULES]]; default: every game "
        "it plays); others are declined (game)",
    )
    what.add_argument(
        "--accept-clocks",
        nargs="+",
        metavar="CLOCK",
        help="accept challenges with these clocks only (as --clock; default: any)",
    )
    what.add_argument(
        "--accept-modes",
        nargs="+",
        choices=("rated", "casual"),
        help="accept rated or casual challenges only (default: both; rated needs --token)",
    )
    what.add_argument("--rules", help="rule set (default: the game's)")
    what.add_argument("--variant", help="variant (default: the game's)")
    what.add_argument("--seats", type=int, help="players in an open room (Big Board: 2-4)")
    what.add_argument(
        "--clock",
        help="time control: none (the default), 5+3 (min+s Fischer), fixed:10; quick match "
        "pairs only bots and players asking for the same",
    )
    what.add_argument("--rated", action="store_true", default=None, help="rated games")
    what.add_argument("--games", type=int, help="stop after this many games (0: forever, default)")
    what.add_argument(
        "--concurrency",
        type=int,
        help="games at once, each with its own engine process, all started before the first "
        "game (default 1); all share one "
        "connection, within the server's limits (a default server: 8 games, about 20 "
        "moves a second in all; the runner waits when it is over them)",
    )
    how = parser.add_argument_group("how")
    how.add_argument("--margin-ms", type=int, help="time kept back per move (default 100)")
    how.add_argument("--untimed-move-s", type=float, help="longest think untimed (default 30)")
    how.add_argument(
        "--max-strikes", type=int, help="misbehaviours before the engine is stopped (default 3)"
    )
    how.add_argument(
        "--log-dir", metavar="DIR", help="write a log per game there (lines within 0.25 s)"
    )
    how.add_argument(
        "--reconnect-s", type=float, help="keep trying to reconnect so long (default 60)"
    )
    how.add_argument("--seed", type=int, help="seed of a built-in level")


def _options(pairs: list[str] | None) -> dict[str, str] | None:
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CliError(f"--engine-option wants NAME=VALUE, got {pair!r}")
        out[name] = value
    return out


def config_from(args: argparse.Namespace, sdk: bool = False) -> BotConfig:
    """The run's settings: the config file's, overlaid with the flags given."""
    from clients.bot.config import ConfigError, build, load_toml

    flags = {k: v for k, v in vars(args).items() if not k.startswith("_")}
    flags["engine_options"] = _options(flags.pop("engine_option", None))
    try:
        return build(load_toml(args.config) if args.config else {}, flags, sdk=sdk)
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace, bot: Bot | None = None) -> int:
    from clients.bot.brains import EngineBrain, LevelBrain, SdkBrain
    from clients.bot.runner import BotRunner

    cfg = config_from(args, sdk=bot is not None)

    def make_brain(strike: Strike, log: Log) -> Brain:
        if bot is not None:
            return SdkBrain(bot, strike)
        if cfg.engine is not None:
            return EngineBrain(cfg.engine, cfg.engine_options, strike, log, cfg.untimed_move_s)
        return LevelBrain(cfg.level or "random", cfg.seed)

    from websockets.exceptions import InvalidURI

    from clients.client import ArenaError

    runner = BotRunner(cfg, make_brain, sys.stdout)
    try:
        # asyncio's own loop, not uvloop (arena serve's): measured about 5% cheaper per
        # move (bench/README.md, session 16), not enough to bring a second loop's ways
        # (libuv's pipes and signals) into the runner
        return asyncio.run(_until_stopped(runner))
    except OSError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    except InvalidURI:
        raise CliError(f"--url {cfg.url}: not a websocket URL (ws://HOST:PORT)") from None
    except ArenaError as exc:  # refused at login: name_taken, a wrong token...
        raise CliError(str(exc)) from None
    except asyncio.CancelledError:  # SIGTERM: stopped as by Ctrl-C (games resigned)
        return 128 + signal.SIGTERM


async def _until_stopped(runner: BotRunner) -> int:
    """The run; SIGTERM (a service manager's stop) ends it as Ctrl-C does: its games
    resigned, logged out (the name free at once), the engines closed."""
    task = asyncio.current_task()
    assert task is not None
    # (none on Windows, nor outside the main thread: an SDK bot run from a thread)
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    return await runner.run()


def main(argv: list[str], bot: Bot | None = None) -> int:
    """``arena bot`` with a Python bot: the SDK's entry point (clients/bot/sdk.py)."""
    from clients.cli import CliError as Err

    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "bot"
    parser = argparse.ArgumentParser(
        prog=prog,
        description=f"a Python bot ({type(bot).__name__}) on an arena server: arena bot's "
        "flags (see arena bot --help), the moves its choose() method's",
    )
    add_arguments(parser, sdk=True)
    args = parser.parse_args(argv)
    try:
        return run(args, bot=bot)
    except Err as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
