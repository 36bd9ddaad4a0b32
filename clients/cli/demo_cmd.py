"""``arena demo``: watch two simple built-in players play a whole Collapsi game.

Everything runs in this process on the engine alone (no server), so it is the
quickest way to see the rules at work. The deal and both players are seeded:
the same ``--seed`` prints the same game.

Players: ``random`` (a seeded random legal move) and ``greedy`` (looks one
move ahead and keeps the move that leaves it the most moves and the next
player the fewest, ties broken at random).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable

from clients.cli import CliError
from engine.collapsi import CollapsiGame

Player = Callable[[CollapsiGame], str]


def random_player(rng: random.Random) -> Player:
    def choose(game: CollapsiGame) -> str:
        return rng.choice(game.legal_moves())

    return choose


def greedy_player(rng: random.Random) -> Player:
    def choose(game: CollapsiGame) -> str:
        me = game.to_move()
        assert me is not None  # only asked while the game goes on
        best: list[str] = []
        best_score = None
        for move in game.legal_moves():
            trial = game.copy()
            trial.play(move)
            res = trial.result()
            if res is not None:
                score = 1000 if res.winner == me else -1000
            else:
                theirs = len(trial.legal_cells())
                # my own mobility on my next turn, looked up from my new cell
                mine = len(trial._gen(me))
                score = mine - theirs
            if best_score is None or score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return rng.choice(best)

    return choose


PLAYERS: dict[str, Callable[[random.Random], Player]] = {
    "random": random_player,
    "greedy": greedy_player,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=1, help="deal and players' seed (default 1)")
    parser.add_argument("--rules", default="standard", help="standard (default) or classic")
    parser.add_argument(
        "--variant", default="base", help="base (default), big-board, shifting, players-choice..."
    )
    parser.add_argument("--players", type=int, default=None, help="players (big-board: 2-4)")
    parser.add_argument(
        "--bots",
        default="greedy,random",
        help="comma-separated player kinds in seat order, cycled: random, greedy "
        "(default greedy,random)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the result")


def run(args: argparse.Namespace) -> int:
    game = CollapsiGame.new(
        rules=args.rules, variant=args.variant, seed=args.seed, players=args.players
    )
    if game.num_players < 2:
        raise CliError("the demo needs at least two players (solo is a puzzle)")
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in PLAYERS]
    if not kinds or unknown:
        raise CliError(f"unknown player kind(s) {unknown}; known: {', '.join(PLAYERS)}")
    names = game.seat_names()
    players = [
        PLAYERS[kinds[s % len(kinds)]](random.Random(f"demo/{args.seed}/{s}"))
        for s in range(game.num_players)
    ]
    labels = [f"{names[s]} ({kinds[s % len(kinds)]})" for s in range(game.num_players)]
    out = print if not args.quiet else (lambda *a, **k: None)
    out(
        f"Collapsi by Mark S. Ball - {game.rules} rules v{game.rules_version}, "
        f"variant {game.variant}, seed {args.seed}, deal {game.setup()}"
    )
    out("players: " + ", ".join(labels))
    out()
    out(game.render())
    while not game.is_over():
        seat = game.to_move()
        assert seat is not None
        move = players[seat](game)
        path = game.path_to(game.parse_move(move)[0])
        game.play(move)
        out()
        out(f"{len(game.history)}. {names[seat]} plays {move} via {'-'.join(map(str, path))}")
        out(game.render())
    result = game.result()
    assert result is not None
    print(
        f"result: {names[result.winner] if result.winner is not None else 'nobody'} wins "
        f"after {len(game.history)} moves; order: " + ", ".join(names[s] for s in result.order)
    )
    return 0
