"""The ``arena`` command: one entry point, one subcommand module per area.

This is the application's composition root, the only place that knows every
part. Each subcommand lives in its own module, imported only when it runs, so
``arena collapsi ...`` never pays for importing the server. A module listed in
:data:`COMMANDS` provides ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

#: subcommand name -> (module path, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "collapsi": ("clients.cli.collapsi_cmd", "Collapsi deals, legal moves, solver, puzzles"),
    "collecto": ("clients.cli.collecto_cmd", "Collecto boards, legal moves, applying moves"),
    "demo": ("clients.cli.demo_cmd", "watch two engine bots play a game, all in this process"),
    "serve": ("server.cli", "run the game server"),
    "admin": ("server.admin_cli", "back up, restore or export a server's data dir"),
    "play": ("clients.cli.play_cmd", "play on a server from the terminal (line mode)"),
    "tui": ("clients.cli.tui_cmd", "the full-screen client: lobby, play, watch, replay"),
    "bot": ("clients.cli.bot_cmd", "connect an AI player (or any program) to a server"),
    "engine": ("clients.cli.engine_cmd", "check an engine program (the engine protocol)"),
    "tournament": ("clients.cli.tournament_cmd", "run a tournament between AI players"),
}


class CliError(Exception):
    """A user mistake: printed as one line, exit status 2, never a traceback."""


def _available() -> dict[str, tuple[str, str]]:
    return {
        name: spec
        for name, spec in COMMANDS.items()
        if importlib.util.find_spec(spec[0]) is not None
    }


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Collapsi Arena: play Collapsi (by Mark S. Ball) and Collecto, "
        "against people or bots, on one machine or many.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = _available()
    for name, (module_path, help_text) in commands.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        # Only the module that will run is imported and asked for its arguments;
        # the others get a bare parser so ``arena --help`` stays fast.
        if argv and argv[0] == name:
            module = importlib.import_module(module_path)
            module.add_arguments(sp)
            sp.set_defaults(_module=module)
    return parser


def _command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``argv`` names: ``arena engine check``'s, say."""
    for word in argv:
        for action in parser._actions:  # (argparse keeps its subcommands there)
            if isinstance(action, argparse._SubParsersAction) and word in action.choices:
                parser = action.choices[word]
                break
    return parser


def main(argv: list[str] | None = None) -> int:
    from engine.base import EngineError  # the engine's errors are user errors here

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:  # (the command's own usage, not arena's: it names the flags it takes)
        _command_parser(parser, argv).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args._module.run(args) or 0)
    except (CliError, EngineError) as exc:
        print(f"arena {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
